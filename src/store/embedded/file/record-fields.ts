// The types of the fields of the embedded store's records (see src/records: Order,
// Delivery, ClientSettings, Job) that the sandbox relies on: lists it iterates, numbers
// it takes as times, texts it takes as ids and keys, objects it reads by field. A record
// of a hand-edited data file or journal line with one of another type would be taken at
// the start and then answer 500 (an order's history "x"), or play work at the wrong time
// (a job's due_at "soon"). A field that is absent is left alone: records of older schema
// versions, and a few written by older builds, lack fields added since.

import { isJsonObject } from '../../../shared/index.js';

/** A field's type: what it must be, as a message says it, and a check of a value that is not undefined. */
interface FieldType {
  readonly what: string;
  readonly ok: (value: unknown) => boolean;
  /** The problem of a value `ok` took, inside it (a list's entries, an object's fields). */
  readonly inner?: (value: unknown) => Problem | undefined;
}

/**
 * A field of the wrong type: its value, its name (a path from the field checked, such as
 * `match` or `[0].match`, completed on the way out), and what it must be. Made only when
 * something is wrong: a check of a well-formed record allocates nothing.
 */
interface Problem {
  value: unknown;
  field: string;
  what: string;
}

/** The types of a record's fields, by name. */
type Fields = ReadonlyMap<string, FieldType>;

/**
 * A time as the sandbox writes one: a finite number. Not held to the dates a clock may
 * show (up to year 9999): a file an older build wrote may have later ones, and opens.
 */
export const isTime = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);

/** A value as a message shows it: short, and never as JSON would (Infinity is not `null`). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'a number out of range';
  if (typeof value === 'string') return value.length <= 20 ? JSON.stringify(value) : 'a string';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const text: FieldType = { what: 'a text', ok: (value) => typeof value === 'string' };
const time: FieldType = { what: 'a time in epoch ms', ok: isTime };
const number: FieldType = { what: 'a number', ok: isTime };
const list: FieldType = { what: 'a list', ok: Array.isArray };
const object: FieldType = { what: 'an object', ok: isJsonObject };
/** An order's sender or item: an object, as the create request's schema has it (a text is read and written back as it is: see `OrderFileFormat`). */
const part: FieldType = { what: 'an object', ok: (value) => isJsonObject(value) || typeof value === 'string' };
const orNull = (type: FieldType): FieldType => ({
  what: `${type.what} or null`,
  ok: (value) => value === null || type.ok(value),
  ...(type.inner && { inner: (value: unknown) => (value === null ? undefined : type.inner!(value)) }),
});
const objectOf = (fields: Fields): FieldType => ({ what: 'an object', ok: isJsonObject, inner: (value) => within('.', fieldsProblem(value as Record<string, unknown>, fields)) });
const listOf = (fields: Fields): FieldType => ({ what: 'a list', ok: Array.isArray, inner: (value) => entriesProblem(value as unknown[], fields) });

/** `problem` (if any) as a problem of the field it is in, its name prefixed with `path`. */
function within(path: string, problem: Problem | undefined): Problem | undefined {
  if (problem !== undefined) problem.field = `${path}${problem.field}`;
  return problem;
}

/**
 * An order's history: a list of entries, the played steps as the order packer keeps
 * them (an instance of a class: JSON gives only plain objects and lists), or as the data
 * file writes them (numbers). An entry with a
 * `step` is a played step, read for its step and time only (see `isPlayedStep`); any other
 * is an entry written out (a cancellation's).
 */
const PLAYED_STEP: Fields = new Map([
  ['step', number],
  ['at', time],
]);
const TRACKING_ENTRY: Fields = new Map([
  ['update_on', number],
  ['note', text],
  ['description', text],
  ['branch', text],
  ['status', orNull(text)],
  ['pod_photo', orNull(text)],
]);
const history: FieldType = {
  what: 'a list',
  ok: (value) => Array.isArray(value) || (isJsonObject(value) && Object.getPrototypeOf(value) !== Object.prototype),
  inner: (value) => (Array.isArray(value) ? historyProblem(value) : undefined),
};

function historyProblem(entries: unknown[]): Problem | undefined {
  // Played steps as the data file writes them (step and time in turn), read without the store's formats (a tool's open of the file).
  if (typeof entries[0] === 'number') {
    const at = entries.findIndex((value) => !isTime(value));
    return at < 0 ? undefined : { value: entries[at], field: `[${at}]`, what: 'a number (played steps, as the data file writes them)' };
  }
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as { step?: unknown; at?: unknown };
    if (!isJsonObject(entry)) return { value: entry, field: `[${i}]`, what: 'an object' };
    // The usual entry, a played step, checked without listing its fields.
    if (isTime(entry.step) && isTime(entry.at)) continue;
    const problem = fieldsProblem(entry as Record<string, unknown>, 'step' in entry ? PLAYED_STEP : TRACKING_ENTRY);
    if (problem !== undefined) return within(`[${i}].`, problem);
  }
  return undefined;
}

const ORDER: Fields = new Map([
  ['order_no', text],
  ['batch_id', text],
  ['client_id', text],
  ['courier_code', text],
  ['scenario', text],
  ['status', text],
  ['sender', part],
  ['item', part],
  ['awb', orNull(text)],
  ['awb_due_at', orNull(time)],
  ['awb_generated_at', orNull(time)],
  ['awb_error', orNull(text)],
  ['journey_start', orNull(time)],
  ['next_step', orNull(number)],
  ['history', history],
  ['webhook_chaos', list],
  ['created_at', time],
  ['updated_at', time],
  ['cancelled_at', orNull(time)],
  ['version', number],
]);

const ATTEMPT: Fields = new Map([
  ['n', number],
  ['at', time],
  ['trigger', text],
  ['chaos', orNull(text)],
  ['url', text],
  ['webhook_timestamp', number],
  ['status_code', orNull(number)],
  ['duration_ms', number],
  ['error', orNull(text)],
  ['response_body', text],
]);

const DELIVERY: Fields = new Map([
  ['id', text],
  ['seq', number],
  ['client_id', text],
  ['endpoint_id', text],
  ['event', text],
  ['order_no', orNull(text)],
  ['body', text],
  ['chaos', list],
  ['status', text],
  ['created_at', time],
  ['next_attempt_at', orNull(time)],
  ['last_error', orNull(text)],
  ['attempts', listOf(ATTEMPT)],
  ['version', number],
]);

const ENDPOINT_SETTING: Fields = new Map([
  ['url', text],
  ['secret', text],
  ['chaos', list],
  ['events', orNull(list)],
  ['description', text],
  ['disabled_at', orNull(time)],
  ['disabled_reason', orNull(text)],
  ['updated_at', time],
]);

const EXTRA_ENDPOINT: Fields = new Map([
  ['id', text],
  ['target', objectOf(new Map([['type', text], ['url', text], ['name', text]]))],
  ['secret', text],
  ['events', orNull(list)],
  ['description', text],
  ['disabled_at', orNull(time)],
  ['disabled_reason', orNull(text)],
  ['created_at', time],
  ['updated_at', time],
  ['last_seen_at', orNull(time)],
]);

const FAULT_RULE: Fields = new Map([
  ['id', text],
  ['match', objectOf(new Map([['method', text], ['path', text], ['operation_id', text], ['headers', object], ['body', object]]))],
  ['action', object],
  ['times', number],
  ['remaining', number],
  ['probability', number],
  ['matched', number],
  ['hits', number],
  ['created_at', text],
]);

const CLIENT: Fields = new Map([
  ['client_id', text],
  ['webhook', orNull(objectOf(ENDPOINT_SETTING))],
  ['endpoints', listOf(EXTRA_ENDPOINT)],
  ['generated_secret', orNull(text)],
  ['faults', listOf(FAULT_RULE)],
  ['fault_seq', number],
  ['reset_listeners', list],
  ['version', number],
]);

const JOB: Fields = new Map([
  ['kind', text],
  ['key', text],
  ['client_id', text],
  ['due_at', time],
  ['version', number],
]);

const FIELDS: ReadonlyMap<string, Fields> = new Map([
  ['orders', ORDER],
  ['deliveries', DELIVERY],
  ['clients', CLIENT],
  ['jobs', JOB],
]);

/**
 * What is wrong with the fields of `record` (a whole record of `collection`, or the
 * fields a journal patch sets on one) whose type is not the type the sandbox writes, or
 * undefined. Absent fields are not looked for. Cheap: a lookup per field, no allocation
 * unless something is wrong.
 *
 * @example
 * fieldTypeProblem('orders', { history: 'x' }); // '"x" for the field "history", where a list must be'
 */
export function fieldTypeProblem(collection: string, record: object): string | undefined {
  const fields = FIELDS.get(collection);
  const problem = fields === undefined ? undefined : fieldsProblem(record as Record<string, unknown>, fields);
  return problem === undefined ? undefined : `${describeValue(problem.value)} for the field "${problem.field}", where ${problem.what} must be`;
}

function fieldsProblem(record: Record<string, unknown>, fields: Fields): Problem | undefined {
  for (const name in record) {
    const type = fields.get(name);
    if (type === undefined) continue;
    const value = record[name];
    if (value === undefined) continue;
    if (!type.ok(value)) return { value, field: name, what: type.what };
    if (type.inner !== undefined) {
      const problem = type.inner(value);
      if (problem !== undefined) return within(name, problem);
    }
  }
  return undefined;
}

/** What is wrong with an entry of a list whose entries are objects of `fields`, or undefined. */
function entriesProblem(entries: unknown[], fields: Fields): Problem | undefined {
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (!isJsonObject(entry)) return { value: entry, field: `[${i}]`, what: 'an object' };
    const problem = fieldsProblem(entry as Record<string, unknown>, fields);
    if (problem !== undefined) return within(`[${i}].`, problem);
  }
  return undefined;
}
