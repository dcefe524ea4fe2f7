import { isJsonObject } from '../../../shared/index.js';
import { describeValue, fieldTypeProblem, isTime } from './record-fields.js';
import { RecordMap } from './record-map.js';
import { DataFileError, type JournalOp, type JournaledFileData } from './types.js';

/** Collections whose every record is a JSON object: an order, a delivery, a client's settings, a job. */
const OBJECT_RECORDS = new Set(['orders', 'deliveries', 'clients', 'jobs']);

/** The fields of a data file that are not collections. */
const HEADER_FIELDS = new Set(['schema_version', 'journal_generation']);

/**
 * What is wrong with `value` as a record of `collection` (of any schema version), or
 * undefined. The embedded adapter builds its indexes from these records and the counters
 * make ids with BigInt: a record of another type would stop the start, or every create,
 * with a bare TypeError. A record's fields must have the types the sandbox writes (see
 * `fieldTypeProblem`): one of another type would answer 500 on every read of it.
 *
 * @example
 * recordProblem('orders', null); // 'null where a record must be an object'
 */
export function recordProblem(collection: string, value: unknown, key?: string): string | undefined {
  if (OBJECT_RECORDS.has(collection)) return isJsonObject(value) ? fieldsProblem(collection, value) : `${describeValue(value)} where a record must be an object`;
  if (collection === 'counters' && !(Number.isSafeInteger(value) && (value as number) >= 0)) {
    return `${describeValue(value)} where a counter must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`;
  }
  if (collection === 'meta' && key !== undefined) return metaProblem(key, value);
  return undefined;
}

/** What is wrong with the fields of a record of `collection` (or those a journal patch sets on one), or undefined. */
function fieldsProblem(collection: string, fields: object): string | undefined {
  const problem = fieldTypeProblem(collection, fields);
  if (problem !== undefined) return problem;
  if (collection === 'clients' && 'clock' in fields && fields.clock != null) return clockProblem('clock', fields.clock as unknown, ['offset_ms', 'now_ms']);
  return undefined;
}

/** What is wrong with a clock kept in the data file (a client's, the sandbox's real one), or undefined. */
function clockProblem(what: string, value: unknown, times: string[], speeds: string[] = []): string | undefined {
  if (!isJsonObject(value)) return `${describeValue(value)} where the ${what} must be an object`;
  const fields = value as Record<string, unknown>;
  for (const field of times) {
    if (!isTime(fields[field])) return `${describeValue(fields[field])} for the ${what}'s ${field}, where a time in epoch ms must be`;
  }
  for (const field of speeds) {
    const speed = fields[field];
    if (!(typeof speed === 'number' && speed > 0 && Number.isFinite(speed))) return `${describeValue(speed)} for the ${what}'s ${field}, where a positive number must be`;
  }
  return undefined;
}

/** What is wrong with a value of the meta collection (see the port's `Meta`), or undefined; keys it does not know are left alone. */
function metaProblem(key: string, value: unknown): string | undefined {
  switch (key) {
    case 'manual_clock_ms':
      return isTime(value) ? undefined : `${describeValue(value)} for the manual clock, where a time in epoch ms must be`;
    case 'jobs_migrated':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : `${describeValue(value)} where a time in epoch ms must be`;
    case 'real_clock': {
      if (!isJsonObject(value)) return `${describeValue(value)} where the real clock must be an object`;
      const optional = (value as { kept_until_wall_ms?: unknown }).kept_until_wall_ms === undefined ? [] : ['kept_until_wall_ms'];
      return clockProblem('real clock', value, ['sim_base_ms', 'wall_base_ms', ...optional], ['speed', 'previous_speed']);
    }
    case 'seed':
    case 'default_token':
    case 'pod_secret':
      // Text, maybe empty: builds before empty --seed values counted as none kept one.
      return typeof value === 'string' ? undefined : `${describeValue(value)} where a text must be`;
    default:
      return undefined;
  }
}

/**
 * Refuses data read from the file at `path` (of schema version 1 on, or migrated) whose
 * collections are not objects of records, or whose records `recordProblem` refuses,
 * before anything is written: a collection of another type would be taken as empty and
 * its records erased by the next checkpoint.
 */
export function checkData(data: JournaledFileData, path: string): void {
  const refuse = (what: string) =>
    new DataFileError(`The data file ${path} has ${what}. It was left as it was: repair it by hand, or move it away to start without it.`);
  for (const [name, records] of Object.entries(data)) {
    if (HEADER_FIELDS.has(name)) continue;
    if (!isJsonObject(records)) throw refuse(`${describeValue(records)} for the collection "${name}", where an object of records must be`);
    // By chunks of keys and values: cheaper than the entries' iterator, which makes a pair per record.
    const chunks = records instanceof RecordMap ? records.entryChunks() : [{ keys: Object.keys(records), values: Object.values(records) as unknown[] }];
    for (const { keys, values } of chunks) {
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === undefined) continue;
        const problem = recordProblem(name, values[i], key);
        if (problem !== undefined) throw refuse(`${problem} in the collection "${name}", key ${JSON.stringify(key)}`);
      }
    }
  }
}

/** What is wrong with a journal line's parsed JSON as a commit (a list of ops, or one op as sandbox 0.1.0 wrote), or undefined. */
export function commitProblem(parsed: unknown): string | undefined {
  const ops = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  if (!Array.isArray(parsed) && !isJsonObject(parsed)) return `${describeValue(parsed)} is not a list of changes`;
  for (const [i, op] of ops.entries()) {
    const problem = opProblem(op);
    if (problem !== undefined) return `change ${i + 1} ${problem}`;
  }
  return undefined;
}

function opProblem(op: unknown): string | undefined {
  if (!isJsonObject(op)) return `is ${describeValue(op)}, not a change`;
  const { c, k, v, d, p } = op as Partial<JournalOp>;
  if (typeof c !== 'string' || typeof k !== 'string') return 'names no collection and key';
  if (d) return undefined;
  if (p !== undefined) {
    if (!isJsonObject(p)) return `sets ${describeValue(p)} as the fields of "${c}" key ${JSON.stringify(k)}`;
    const problem = OBJECT_RECORDS.has(c) ? fieldsProblem(c, p) : undefined;
    return problem === undefined ? undefined : `sets ${problem} in "${c}", key ${JSON.stringify(k)}`;
  }
  if (v === undefined) return `has no record for "${c}" key ${JSON.stringify(k)}`;
  const problem = recordProblem(c, v, k);
  return problem === undefined ? undefined : `puts ${problem} in "${c}", key ${JSON.stringify(k)}`;
}
