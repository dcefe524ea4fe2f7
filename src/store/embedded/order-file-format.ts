import { ORDERS } from './collections.js';
import { copyWith, DataFileError, type RecordFormat, type RecordFormats } from './file/index.js';
import { PlayedSteps, type PackedOrder } from './played-steps.js';

/**
 * Orders in the data file (schema version 4 on), written shorter than their JSON so
 * that a big file is smaller and starts faster (a start spends much of its time parsing
 * the file's JSON):
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
