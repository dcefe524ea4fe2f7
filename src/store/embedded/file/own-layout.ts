import { twice } from './duplicate-field.js';
import { readLines } from './lines.js';
import { RecordMap } from './record-map.js';
import { FORMATS_SINCE, type JournaledFileData, type RecordFormats, type Records } from './types.js';

/** Not this sandbox's line layout: read the file with the streaming JSON parser instead. */
class OtherLayout extends Error {}

const HEADER = /^\{"schema_version":(\d+),"journal_generation":(\d+),?$/;
const COLLECTION = /^("(?:[^"\\]|\\.)*"):\{(\}?),?$/;

/**
 * Reads a file in the layout `writeFrom` writes (a header line, then per collection a
 * `"name":{` line and one `"key":value` line per record), or returns undefined for any
 * other layout.
 */
export async function readOwnFormat(path: string, formats: RecordFormats, pack?: (collection: string, value: unknown) => unknown): Promise<JournaledFileData | undefined> {
  let data: JournaledFileData | undefined;
  let records: Records | undefined;
  let name = '';
  let read: ReadRecord | undefined;
  let closed = false;
  try {
    const { end, size } = await readLines(path, (line) => {
      if (closed) {
        if (line.trim() !== '') throw new OtherLayout();
      } else if (data === undefined) {
        const header = HEADER.exec(line);
        if (!header) throw new OtherLayout();
        data = { schema_version: Number(header[1]), journal_generation: Number(header[2]) };
      } else if (records === undefined) {
        if (line === '}') {
          closed = true;
          return;
        }
        const start = COLLECTION.exec(line);
        if (!start) throw new OtherLayout();
        const collection: Records = new RecordMap();
        name = JSON.parse(start[1]!) as string;
        if (Object.hasOwn(data, name)) throw twice(path, name);
        data[name] = collection;
        const format = data.schema_version >= FORMATS_SINCE ? formats[name] : undefined;
        const collectionName = name;
        const earlier = (key: string) => collection.get(key);
        if (format === undefined) read = pack === undefined ? undefined : (_key, value) => pack(collectionName, value);
        else read = pack === undefined ? (key, value) => format.read(key, value, earlier) : (key, value) => pack(collectionName, format.read(key, value, earlier));
        if (start[2] !== '}') records = collection;
      } else if (readRecord(line, records, read)) {
        records = undefined;
      }
    });
    if (!closed || end < size) throw new OtherLayout();
  } catch (error) {
    if (error instanceof OtherLayout) return undefined;
    throw error;
  }
  return data;
}

/** What a record read becomes as kept: in its collection's format, then packed. */
type ReadRecord = (key: string, value: unknown) => unknown;

/**
 * Adds the record on `line` to `records`; true when the line also closes the collection.
 * Only the value is parsed (the key is sliced off), so no object is built and copied per
 * line, as wrapping each line in braces to parse it whole would.
 */
function readRecord(line: string, records: Records, read?: ReadRecord): boolean {
  const keyEnd = endOfKey(line);
  const key = line.slice(1, keyEnd);
  const name = key.includes('\\') ? (JSON.parse(`"${key}"`) as string) : key;
  const end = line.endsWith(',') ? line.length - 1 : line.length;
  let closes = false;
  let value: unknown;
  try {
    value = JSON.parse(line.slice(keyEnd + 2, end));
  } catch {
    // The last record of a collection carries its closing brace: `"key":value}`.
    if (line.charCodeAt(end - 1) !== CLOSE_BRACE) throw new OtherLayout();
    try {
      value = JSON.parse(line.slice(keyEnd + 2, end - 1));
    } catch {
      throw new OtherLayout();
    }
    closes = true;
  }
  records.set(name, read ? read(name, value) : value);
  return closes;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const CLOSE_BRACE = 0x7d;

/** Where the JSON string key that starts `line` ends (its closing quote, followed by a colon). */
function endOfKey(line: string): number {
  if (line.charCodeAt(0) !== QUOTE) throw new OtherLayout();
  for (let i = 1; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === BACKSLASH) i += 1;
    else if (c === QUOTE) {
      if (line.charCodeAt(i + 1) !== COLON) throw new OtherLayout();
      return i;
    }
  }
  throw new OtherLayout();
}
