import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import chain from 'stream-chain';
import { parser } from 'stream-json';
import { streamObject } from 'stream-json/streamers/stream-object.js';
import { nodeFileSystem, Utf8Chunk, writeAll } from './files.js';
import { readLines } from './lines.js';
import { RecordMap } from './record-map.js';
import { DataFileError, recordOf, type Adapter, type Collection, type RecordFormats, type Records, type JournaledFileData, type StoreFileSystem } from './types.js';

/** The first schema version whose files may hold records in their collection's `RecordFormat`. */
export const FORMATS_SINCE = 4;

/**
 * A chunk is written (and the event loop gets its turn) at this size or after SLICE_MS
 * of serializing, whichever comes first: a 1 MiB chunk took 10-60 ms to build here.
 */
const CHUNK_BYTES = 256 * 1024;
const SLICE_MS = 4;

/** A run of a collection's keys in order (undefined: an empty slot), with their records when known. */
export interface SnapshotChunk {
  keys: ReadonlyArray<string | undefined>;
  /** The record of each key, as committed when the chunk was taken; without it, `valueOf` gives each. */
  values?: ReadonlyArray<unknown>;
}

/** What a checkpoint writes for a record, and when it must give up (the store is closing). */
export interface SnapshotSource {
  /** The collection's keys (and records) in chunks, each as it is when its turn comes: records made later are in the journal. */
  chunksOf(collection: string, records: Collection | Records): Iterable<SnapshotChunk>;
  /** The value to write for `key` of a chunk without records (the last committed one), or undefined to leave it out. */
  valueOf(collection: string, key: string): unknown;
  /** Checked between chunks: true makes the write stop, remove its temporary file and throw CheckpointAborted. */
  aborted(): boolean;
  /** Checked right before the written file replaces the data file: false stops the write as `aborted` does. */
  mayReplace?(): boolean;
}

export class CheckpointAborted extends Error {
  override name = 'CheckpointAborted';
}

/**
 * The readable JSON data file, one record per line.
 *
 * Reading is streamed, so a file of any size loads (a string cannot pass ~512 MiB): a
 * file this sandbox wrote is read line by line; any other JSON object (a lowdb file of
 * sandbox 0.0.x, a file pretty-printed by hand) goes through a streaming JSON parser.
 *
 * Writing streams the records in chunks of at most 256 KiB or 4 ms of work and yields between them, so a
 * checkpoint never stalls the event loop; the file is written to `<data>.tmp-<pid>`
 * (mode 0600), fsync'd, then renamed over the old one, so a crash leaves either the old
 * file or the new one, and a failed write leaves the old one and removes its temp file.
 */
export class SnapshotFile implements Adapter<JournaledFileData> {
  /** Size in bytes of the file as last read or written. */
  bytes = 0;

  constructor(
    readonly path: string,
    private readonly fs: StoreFileSystem = nodeFileSystem,
    /** Applied to each record of a file in this sandbox's layout as it is read (see JournaledFileOptions.pack). */
    private readonly pack?: (collection: string, value: unknown) => unknown,
    /** How records are written and read, by collection, in files of schema version 4 on (see JournaledFileOptions.formats). */
    private readonly formats: RecordFormats = {},
  ) {}

  async read(): Promise<JournaledFileData | null> {
    try {
      this.bytes = statSync(this.path).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new DataFileError(`Cannot read the data file ${this.path}: ${(error as Error).message}`);
    }
    try {
      return (await readOwnFormat(this.path, this.formats, this.pack)) ?? inFormats(await readAnyJson(this.path), this.formats);
    } catch (error) {
      if (error instanceof DataFileError) throw error;
      throw new DataFileError(`Cannot read the data file ${this.path}: ${(error as Error).message}`);
    }
  }

  write(data: JournaledFileData): Promise<void> {
    return this.writeFrom(data, { chunksOf: chunksOf, valueOf: (name, key) => recordOf(data[name] as Collection | Records, key), aborted: () => false });
  }

  /** Writes `data`'s records as `source` says, through a temporary file renamed into place. */
  async writeFrom(data: JournaledFileData, source: SnapshotSource): Promise<void> {
    // Unique per write: two containers are both pid 1, and one's leftover must never be the other's file.
    const tmp = `${this.path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const fd = openSync(tmp, 'w', 0o600);
    const chunk = new Utf8Chunk(CHUNK_BYTES);
    try {
      chunk.add(`{"schema_version":${data.schema_version},"journal_generation":${data.journal_generation}`);
      let sliceStart = performance.now();
      for (const [name, records] of Object.entries(data)) {
        if (typeof records !== 'object') continue;
        chunk.add(`,\n${JSON.stringify(name)}:{`);
        const format = data.schema_version >= FORMATS_SINCE ? this.formats[name]?.writer() : undefined;
        let first = true;
        for (const { keys, values } of source.chunksOf(name, records)) {
          for (let i = 0; i < keys.length; i++) {
            const key = keys[i];
            if (key === undefined) continue;
            const value = values !== undefined ? values[i] : source.valueOf(name, key);
            if (value === undefined) continue; // deleted meanwhile, or created and not committed yet
            chunk.add(first ? '\n' : ',\n');
            chunk.add(JSON.stringify(key));
            chunk.add(':');
            chunk.add(JSON.stringify(format ? format(key, value) : value));
            first = false;
            if (chunk.length >= CHUNK_BYTES || performance.now() - sliceStart >= SLICE_MS) {
              if (source.aborted()) throw new CheckpointAborted('The checkpoint was stopped: the store is closing.');
              await writeAll(this.fs, fd, chunk.take());
              sliceStart = performance.now();
            }
          }
        }
        chunk.add('}');
      }
      chunk.add('\n}\n');
      await writeAll(this.fs, fd, chunk.take());
      await this.fs.fsync(fd);
      closeSync(fd);
    } catch (error) {
      closeSync(fd);
      rmSync(tmp, { force: true });
      throw error;
    }
    if (source.mayReplace?.() === false) {
      rmSync(tmp, { force: true });
      throw new CheckpointAborted('The checkpoint was stopped: this sandbox no longer holds the data file.');
    }
    renameSync(tmp, this.path);
    this.bytes = statSync(this.path).size;
    await syncDirectory(dirname(this.path));
  }

  /** Removes temporary files of checkpoints cut short by a crash. Only with the lock held: no other writer is alive. */
  removeLeftovers(): string[] {
    const dir = dirname(this.path);
    const prefix = `${basename(this.path)}.tmp-`;
    const removed = readdirSync(dir).filter((name) => name.startsWith(prefix) && /^\d+(-[0-9a-f]{8})?$/.test(name.slice(prefix.length)));
    for (const name of removed) rmSync(join(dir, name), { force: true });
    return removed;
  }
}

/**
 * A collection's keys and records as they are now, in order: a RecordMap's as copies of
 * its chunks (without a pause that grows with it), a plain object's keys as one chunk.
 * For data no one changes while it is written; the store's checkpoint has its own.
 */
export function* chunksOf(_collection: string, records: Collection | Records): Generator<SnapshotChunk> {
  if (records instanceof RecordMap) yield* records.entryChunks();
  else yield { keys: Object.keys(records) };
}

/** Not this sandbox's line layout: read the file with the streaming JSON parser instead. */
class OtherLayout extends Error {}

const HEADER = /^\{"schema_version":(\d+),"journal_generation":(\d+),?$/;
const COLLECTION = /^("(?:[^"\\]|\\.)*"):\{(\}?),?$/;

/**
 * Reads a file in the layout `writeFrom` writes (a header line, then per collection a
 * `"name":{` line and one `"key":value` line per record), or returns undefined for any
 * other layout.
 */
async function readOwnFormat(path: string, formats: RecordFormats, pack?: (collection: string, value: unknown) => unknown): Promise<JournaledFileData | undefined> {
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

/**
 * Adds the record on `line` to `records`; true when the line also closes the collection.
 * Only the value is parsed (the key is sliced off), so no object is built and copied per
 * line: at 300,000 orders wrapping each line in braces and copying the record cost ~1 s.
 */
/** What a record read becomes as kept: in its collection's format, then packed. */
type ReadRecord = (key: string, value: unknown) => unknown;

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

/**
 * A file of schema version 4 on read by the streaming parser (one reformatted by hand,
 * say): its records in their collections' formats are read as the line reader reads them.
 */
function inFormats(data: JournaledFileData, formats: RecordFormats): JournaledFileData {
  if (typeof data.schema_version !== 'number' || data.schema_version < FORMATS_SINCE) return data;
  for (const [name, format] of Object.entries(formats)) {
    const records = data[name];
    if (typeof records !== 'object' || records === null || records instanceof RecordMap) continue;
    const earlier = (key: string) => (Object.hasOwn(records, key) ? records[key] : undefined);
    for (const key of Object.keys(records)) records[key] = format.read(key, records[key], earlier);
  }
  return data;
}

/** Reads any JSON object with a streaming parser: each top-level value is assembled as it ends. */
async function readAnyJson(path: string): Promise<JournaledFileData> {
  const data: Record<string, unknown> = {};
  try {
    const pipeline = chain([createReadStream(path), parser(), streamObject()]);
    for await (const { key, value } of pipeline as AsyncIterable<{ key: string; value: unknown }>) {
      if (Object.hasOwn(data, key)) throw twice(path, key);
      data[key] = value;
    }
  } catch (error) {
    if (error instanceof DataFileError) throw error;
    throw new DataFileError(
      `The data file ${path} is not valid JSON (${(error as Error).message}). ` +
        'It was left untouched: repair or move it, or start with --data :memory:.',
    );
  }
  if (Object.keys(data).length === 0 && !(await startsWithObject(path))) {
    throw new DataFileError(`The data file ${path} does not hold a JSON object. It was left untouched.`);
  }
  return data as JournaledFileData;
}

/** A field given twice (a collection pasted in by hand): reading on would keep only the last, and the next checkpoint would erase the first. */
const twice = (path: string, name: string) =>
  new DataFileError(
    `The data file ${path} has ${JSON.stringify(name)} twice. It was left as it was: merge the two into one by hand, or move the file away to start without it.`,
  );

async function startsWithObject(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    return buffer.toString('utf8', 0, bytesRead).trimStart().startsWith('{');
  } finally {
    await handle.close();
  }
}

async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    await handle.sync().finally(() => handle.close());
  } catch {
    // Not every file system lets a directory be fsync'd; the rename is still atomic.
  }
}
