import type { Order } from '../../records/index.js';
import { freeze } from '../freeze.js';
import { EMPTY } from './empty-list.js';
import { copyOf, copyWith, Shapes } from './file/index.js';
import { PlayedSteps, type PackedOrder } from './played-steps.js';

/** Strings up to this length come out of JSON.parse already shared by V8 (its string table). */
const INTERNED_LENGTH = 10;

/** An order's history as kept: played steps packed, an empty one the shared empty array, anything else as it is. */
function packedHistory(history: PackedOrder['history']): PackedOrder['history'] {
  if (!Array.isArray(history)) return history;
  return history.length === 0 ? (EMPTY as never[]) : (PlayedSteps.pack(history) ?? history);
}

/** Whether a record holds only plain values (no nested object or array). */
const isFlat = (record: Record<string, unknown>): boolean => {
  for (const key in record) {
    const value = record[key];
    if (typeof value === 'object' && value !== null) return false;
  }
  return true;
};

/**
 * Whether `b` has exactly the fields of the flat record `a` (whose keys, in order, are
 * `keys`), in the same order, with the same values: the order of the keys shows in the
 * JSON a client reads back and in the data file, so a part sent with its keys in another
 * order is not shared.
 */
const sameFields = (a: Record<string, unknown>, keys: readonly string[], b: Record<string, unknown>): boolean => {
  let i = 0;
  for (const key in b) {
    if (key !== keys[i] || a[key] !== b[key] || !Object.prototype.hasOwnProperty.call(b, key)) return false;
    i += 1;
  }
  return i === keys.length;
};

/** Whether `b`'s own enumerable keys are `keys`, in order. */
const sameKeys = (keys: readonly string[], b: Record<string, unknown>): boolean => {
  let i = 0;
  for (const key in b) {
    // An inherited key is no field of `b`: its own keys are then not the list.
    if (key !== keys[i] || !Object.prototype.hasOwnProperty.call(b, key)) return false;
    i += 1;
  }
  return i === keys.length;
};

/**
 * Each client's last part of a kind (sender or item) with the list of its keys, kept so
 * that comparing a part with it lists no keys: the next part of the same fields (the next
 * item of a multi-item create) takes the same list.
 */
class LastParts {
  readonly parts = new Map<string, Record<string, unknown>>();
  readonly keys = new Map<string, readonly string[]>();
}

/**
 * Packs orders as the store takes them in (from the data file, the journal, a commit):
 * played steps as `PlayedSteps`, and the sender and the item shared with the client's
 * previous order when they are the same: a shop ships from one or a few places, and a
 * partner's test suite sends the same fixture over and over, so one copy serves many
 * orders. Shared parts are frozen, as every stored record is. Packing keeps what the
 * record says, and its JSON, exactly.
 */
export class OrderPacker {
  /** Lists of fields compiled per client for its parts. */
  static readonly PART_SHAPES = 8;
  private readonly senders = new LastParts();
  private readonly items = new LastParts();
  /** One copy of each client id: a parsed one is a string of its own per order. */
  private readonly clientIds = new Map<string, string>();
  /** Each client's compiled copies of its parts (see `Shapes`): a few lists a client, as a shop sends a few kinds of item. */
  private readonly partShapes = new Map<string, Shapes>();
  private readonly shapesOf = (clientId: string): Shapes => {
    let shapes = this.partShapes.get(clientId);
    if (shapes === undefined) this.partShapes.set(clientId, (shapes = new Shapes(OrderPacker.PART_SHAPES)));
    return shapes;
  };

  /**
   * The order as kept. `current` is the order it replaces, as kept: a sender or item it
   * still shares with it is packed already and kept as it is (an update, such as the AWB,
   * then leaves the item the same object, and the journal need not carry it again).
   */
  pack(value: unknown, current?: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const order = value as PackedOrder;
    const was = typeof current === 'object' && current !== null ? (current as PackedOrder) : undefined;
    const clientId = this.clientIds.get(order.client_id);
    if (clientId === undefined && typeof order.client_id === 'string') this.clientIds.set(order.client_id, order.client_id);
    const history = packedHistory(order.history);
    const sender = (was?.sender === order.sender ? order.sender : shared(this.senders, order.client_id, order.sender as unknown, this.shapesOf)) as Order['sender'];
    const item = (was?.item === order.item ? order.item : shared(this.items, order.client_id, order.item as unknown, this.shapesOf)) as Order['item'];
    if (!Object.isFrozen(order)) {
      if (clientId !== undefined) order.client_id = clientId;
      if (history !== order.history) order.history = history;
      order.sender = sender;
      order.item = item;
      return order;
    }
    if (history === order.history && sender === order.sender && item === order.item) return order;
    return freeze(copyWith(order, history === order.history ? { sender, item } : { sender, item, history }));
  }
}

/**
 * `part`, or the client's last one of its kind when that has the same fields; a new flat
 * part becomes the client's last. A part that differs from the last in some values (the
 * items of one multi-item create differ in their order code, say) takes the last one's
 * strings for the values that are equal, so each long text (an address, a name) is kept
 * once rather than once per order.
 */
function shared(last: LastParts, clientId: string, part: unknown, shapesOf: (clientId: string) => Shapes): unknown {
  if (typeof part !== 'object' || part === null || typeof clientId !== 'string') return part;
  // A part with a "__proto__" field of its own (JSON allows it) is left as it is: copying it by assignment would lose that field.
  if (Object.hasOwn(part, '__proto__')) return part;
  let record = part as Record<string, unknown>;
  const known = last.parts.get(clientId);
  const knownKeys = last.keys.get(clientId);
  if (known !== undefined && (known === record || sameFields(known, knownKeys!, record))) return known;
  // Only a part of plain values is shared (and compared field by field).
  if (!isFlat(record)) return record;
  if (known !== undefined) record = withStringsOf(known, record, () => shapesOf(clientId));
  last.parts.set(clientId, freeze(record));
  last.keys.set(clientId, knownKeys !== undefined && sameKeys(knownKeys, record) ? knownKeys : Object.keys(record));
  return record;
}

/** `record` with each string value equal to `known`'s under the same key replaced by `known`'s (in place unless frozen; a copy through the client's `shapes`). */
function withStringsOf(known: Record<string, unknown>, record: Record<string, unknown>, shapes: () => Shapes): Record<string, unknown> {
  let target = record;
  for (const key in record) {
    const value = record[key];
    const mine = known[key];
    if (typeof value !== 'string' || value !== mine || value.length <= INTERNED_LENGTH) continue;
    if (Object.isFrozen(target)) target = copyOf(record, shapes());
    target[key] = mine;
  }
  return target;
}
