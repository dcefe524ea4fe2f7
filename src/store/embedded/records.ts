import type { Order, PlayedStep } from '../../records/index.js';
import { freeze } from '../freeze.js';
import type { Stored } from '../port.js';
import { copyOf, copyWith, DataFileError, Shapes, type RecordFormat, type RecordFormats } from './file/index.js';

/** Collections of the data file, one per kind of record. */
export const ORDERS = 'orders';
export const DELIVERIES = 'deliveries';
export const CLIENTS = 'clients';
export const COUNTERS = 'counters';
export const META = 'meta';
export const JOBS = 'jobs';

/** One frozen empty array for every empty list of a stored record (an order's history, a delivery's attempts). */
const EMPTY: readonly never[] = Object.freeze([]);

/** The shared empty array for an empty array, else the value itself. */
const emptied = (value: unknown): unknown => (Array.isArray(value) && value.length === 0 ? EMPTY : value);

/** Strings up to this length come out of JSON.parse already shared by V8 (its string table). */
const INTERNED_LENGTH = 10;

/** A stored record as the port gives it: frozen, with a version (records of older files count as version 0). */
export function stored<T>(value: T | undefined): Stored<T> | undefined {
  if (value === undefined) return undefined;
  const record = value as T & { version?: number };
  if (record.version === undefined) {
    if (!Object.isFrozen(record)) record.version = 0;
    else return freeze(copyWith(record, { version: 0 })) as Stored<T>;
  }
  return freeze(record) as Stored<T>;
}

/** The key of a job: one job per kind and key. */
export const jobId = (kind: string, key: string): string => `${kind}:${key}`;

/**
 * An order's played steps (`{ step, at }` entries) kept as one array of numbers, step and
 * time in turn. An entry as an object costs ~70 bytes of heap (the object, its boxed
 * time, the array slot): with nine steps that was ~40% of a stored order. The numbers
 * sit in a private field, out of reach of callers and of `freeze` (freezing an array of
 * doubles makes V8 turn it into a dictionary). Written to the journal and the data file
 * as the entries it stands for (`toJSON`), so the files do not change.
 */
export class PlayedSteps {
  readonly #values: number[];

  private constructor(values: number[]) {
    this.#values = values;
  }

  /** The steps packed, or undefined when an entry is anything but `{ step, at }` with finite numbers (e.g. a cancellation written out). */
  static pack(history: readonly unknown[]): PlayedSteps | undefined {
    const values: number[] = [];
    for (const entry of history) {
      if (typeof entry !== 'object' || entry === null) return undefined;
      let keys = 0;
      for (const key in entry) {
        if (key !== (keys === 0 ? 'step' : 'at') || keys > 1) return undefined;
        keys += 1;
      }
      const { step, at } = entry as PlayedStep;
      // Finite numbers only: JSON writes any other as null, which would not read back as a step.
      if (keys !== 2 || !Number.isFinite(step) || !Number.isFinite(at)) return undefined;
      values.push(step, at);
    }
    return new PlayedSteps(values);
  }

  /** Steps from their numbers (step and time in turn), or undefined unless `values` is an even number of finite numbers. */
  static fromValues(values: readonly unknown[]): PlayedSteps | undefined {
    if (values.length % 2 !== 0) return undefined;
    for (const value of values) if (!Number.isFinite(value)) return undefined;
    return new PlayedSteps(values as number[]);
  }

  /** The numbers, step and time in turn (the data file's form, see `OrderFileFormat`). Not to be changed. */
  values(): readonly number[] {
    return this.#values;
  }

  /** The entries as the Order type has them: new objects, in the order they were packed. */
  entries(): PlayedStep[] {
    const values = this.#values;
    const entries: PlayedStep[] = [];
    for (let i = 0; i < values.length; i += 2) entries.push({ step: values[i]!, at: values[i + 1]! });
    return entries;
  }

  toJSON(): PlayedStep[] {
    return this.entries();
  }
}

/** An order as the embedded store keeps it: its played steps may be packed. */
export type PackedOrder = Omit<Order, 'history'> & { history: Order['history'] | PlayedSteps; version?: number };

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
 * Whether `b` has exactly the fields of the flat record `a`, in the same order, with the
 * same values: the order of the keys shows in the JSON a client reads back and in the
 * data file, so a part sent with its keys in another order is not shared.
 */
const sameFields = (a: Record<string, unknown>, b: Record<string, unknown>): boolean => {
  const keys = Object.keys(a);
  let i = 0;
  for (const key in b) {
    if (key !== keys[i] || a[key] !== b[key]) return false;
    i += 1;
  }
  return i === keys.length;
};

/**
 * Packs orders as the store takes them in (from the data file, the journal, a commit):
 * played steps as `PlayedSteps`, and the sender and the item shared with the client's
 * previous order when they are the same: a shop ships from one or a few places, and a
 * partner's test suite sends the same fixture over and over (each copy cost ~220 and
 * ~340 bytes). Shared parts are frozen, as every stored record is. Packing keeps what the
 * record says, and its JSON, exactly.
 */
export class OrderPacker {
  /** Lists of fields compiled per client for its parts. */
  static readonly PART_SHAPES = 8;
  private readonly senders = new Map<string, Record<string, unknown>>();
  private readonly items = new Map<string, Record<string, unknown>>();
  /** One copy of each client id: a parsed one is a string of its own per order (~40 bytes). */
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
function shared(last: Map<string, Record<string, unknown>>, clientId: string, part: unknown, shapesOf: (clientId: string) => Shapes): unknown {
  if (typeof part !== 'object' || part === null || typeof clientId !== 'string') return part;
  // A part with a "__proto__" field of its own (JSON allows it) is left as it is: copying it by assignment would lose that field.
  if (Object.hasOwn(part, '__proto__')) return part;
  let record = part as Record<string, unknown>;
  const known = last.get(clientId);
  if (known !== undefined && (known === record || sameFields(known, record))) return known;
  // Only a part of plain values is shared (and compared field by field).
  if (!isFlat(record)) return record;
  if (known !== undefined) record = withStringsOf(known, record, () => shapesOf(clientId));
  last.set(clientId, freeze(record));
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

/**
 * Orders in the data file (schema version 4 on), written shorter than their JSON so
 * that a big file is smaller and starts faster (`JSON.parse` was half of a start at
 * 300,000 orders):
 *
 * - Played steps as their numbers, step and time in turn:
 *   `"history":[2,1700000002000,1,1700000001000,0,1700000000000]`. A history that
 *   holds anything else (a cancellation's entry) is written as it is, as objects; an
 *   order's history never holds a bare number, so the two cannot be confused.
 * - A sender or item that is the very one (shared by `OrderPacker`) of an order written
 *   earlier in the same file as the string `"=<that order's number>"`. Only the last
 *   256 of each are looked for. A sender or item is always an object (the create
 *   request's schema says so); should one be a string that starts with `=`, it is
 *   written with one more `=` in front, and read back without it.
 *
 * Everything else is the record's JSON. Reading gives the record exactly as written,
 * packed as `OrderPacker` keeps it.
 */
export class OrderFileFormat implements RecordFormat {
  static readonly RECENT_PARTS = 256;

  writer(): (key: string, value: unknown) => unknown {
    const senders = new RecentParts(OrderFileFormat.RECENT_PARTS);
    const items = new RecentParts(OrderFileFormat.RECENT_PARTS);
    return (key, value) => {
      if (typeof value !== 'object' || value === null) return value;
      const order = value as PackedOrder;
      const history = stepsInFile(order.history);
      const sender = senders.written(key, order.sender);
      const item = items.written(key, order.item);
      if (history === order.history && sender === order.sender && item === order.item) return order;
      // Only fields the order has are replaced, so the copy lists them in the order's own order.
      const changes: Record<string, unknown> = {};
      if (history !== order.history) changes.history = history;
      if (sender !== order.sender) changes.sender = sender;
      if (item !== order.item) changes.item = item;
      return copyWith(order, changes);
    };
  }

  read(key: string, value: unknown, earlier: (key: string) => unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const order = value as Record<string, unknown>;
    const history = order.history;
    if (Array.isArray(history) && typeof history[0] === 'number') {
      const steps = PlayedSteps.fromValues(history);
      if (steps === undefined) throw new DataFileError(`Order ${key} in the data file has a history of ${history.length} values that are not steps and times.`);
      order.history = steps;
    }
    if (typeof order.sender === 'string') order.sender = partRead(key, 'sender', order.sender, earlier);
    if (typeof order.item === 'string') order.item = partRead(key, 'item', order.item, earlier);
    return order;
  }
}

/** The embedded store's formats in the data file, by collection. */
export const FILE_FORMATS: RecordFormats = { [ORDERS]: new OrderFileFormat() };

/** A history as the data file has it: played steps as their numbers, anything else as it is. */
function stepsInFile(history: PackedOrder['history']): unknown {
  if (history instanceof PlayedSteps) return history.values();
  if (!Array.isArray(history) || history.length === 0) return history;
  return PlayedSteps.pack(history)?.values() ?? history;
}

/** A sender or item read as a string: the part of the earlier order it names, or (`==…`) a string of its own. */
function partRead(key: string, field: 'sender' | 'item', text: string, earlier: (key: string) => unknown): unknown {
  if (!text.startsWith('=')) return text;
  if (text.startsWith('==')) return text.slice(1);
  const named = text.slice(1);
  const part = (earlier(named) as Record<string, unknown> | undefined)?.[field];
  if (typeof part !== 'object' || part === null) {
    throw new DataFileError(`Order ${key} in the data file takes its ${field} from order ${named}, which is not before it in the file with a ${field}.`);
  }
  return part;
}

/**
 * The senders (or items) written lately, each with the order it was written in full
 * with: a part written again is written as a reference to that order. Bounded, oldest
 * out first, so a checkpoint of a store whose every order has its own item holds no
 * map of all of them.
 */
class RecentParts {
  private readonly keys = new Map<object, string>();

  constructor(private readonly size: number) {}

  /** What to write for `part` in the order `key` (written now). */
  written(key: string, part: unknown): unknown {
    if (typeof part === 'string') return part.startsWith('=') ? `=${part}` : part;
    if (typeof part !== 'object' || part === null) return part;
    const first = this.keys.get(part);
    if (first !== undefined) return `=${first}`;
    if (this.keys.size >= this.size) this.keys.delete(this.keys.keys().next().value!);
    this.keys.set(part, key);
    return part;
  }
}

/**
 * Packs deliveries as the store takes them in: an empty list of attempts or chaos modes
 * is the one shared empty array, and a `last_error` text seen lately is kept once (the
 * same "no webhook URL is set" or "Outbox full" text was a string of its own on every
 * held delivery, ~300 bytes each for the latter). Keeps the record's JSON exactly.
 */
export class DeliveryPacker {
  private readonly errors = new Map<string, string>();

  constructor(private readonly errorsKept = 256) {}

  pack(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const delivery = value as Record<string, unknown>;
    const attempts = emptied(delivery.attempts);
    const chaos = emptied(delivery.chaos);
    // Strings compare by value: a text is kept once by setting the known copy, whenever there is one.
    const lastError = typeof delivery.last_error === 'string' ? this.error(delivery.last_error) : undefined;
    if (attempts === delivery.attempts && chaos === delivery.chaos && lastError === undefined) return delivery;
    // A record read from the file or the journal is changed in place and left unfrozen, as
    // OrderPacker leaves it (`stored` then gives one of an older file its version 0); one
    // committed (frozen) is copied. Only the fields that change are set.
    const frozen = Object.isFrozen(delivery);
    const packed = frozen ? copyOf(delivery) : delivery;
    if (attempts !== delivery.attempts) packed.attempts = attempts;
    if (chaos !== delivery.chaos) packed.chaos = chaos;
    if (lastError !== undefined) packed.last_error = lastError;
    return frozen ? freeze(packed) : packed;
  }

  private error(text: string): string {
    const known = this.errors.get(text);
    if (known !== undefined) return known;
    if (this.errors.size >= this.errorsKept) this.errors.delete(this.errors.keys().next().value!);
    this.errors.set(text, text);
    return text;
  }
}

/** A stored order as the port gives it: frozen, its played steps as objects. */
export function unpacked(value: unknown): Stored<Order> | undefined {
  const order = value as PackedOrder | undefined;
  if (order === undefined || !(order.history instanceof PlayedSteps)) return stored(order as Order | undefined);
  return freeze(copyWith(order, { history: order.history.entries(), version: order.version ?? 0 })) as Stored<Order>;
}

/**
 * Orders handed out lately, by the stored record they were unpacked from. Reading an
 * order again (a partner polling its tracking) gives the same frozen object: what is
 * cached per order and per step object (tracking's rendered steps) is found again, and
 * the read allocates nothing. Bounded, oldest out first.
 */
export class UnpackedOrders {
  private readonly recent = new Map<object, Stored<Order>>();

  constructor(private readonly size = 4096) {}

  of(value: unknown): Stored<Order> | undefined {
    if (typeof value !== 'object' || value === null || !((value as PackedOrder).history instanceof PlayedSteps)) return stored(value as Order | undefined);
    let order = this.recent.get(value);
    if (order === undefined) {
      order = unpacked(value)!;
      if (this.recent.size >= this.size) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(value, order);
    }
    return order;
  }
}
