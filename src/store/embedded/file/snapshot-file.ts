import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { inFormats, readAnyJson } from './any-json.js';
import { nodeFileSystem, Utf8Chunk, writeAll } from './files.js';
import { readOwnFormat } from './own-layout.js';
import { RecordMap } from './record-map.js';
import { DataFileError, FORMATS_SINCE, recordOf, type Adapter, type Collection, type RecordFormats, type Records, type JournaledFileData, type StoreFileSystem } from './types.js';

/**
 * A chunk is written (and the event loop gets its turn) at this size or after SLICE_MS
 * of serializing, whichever comes first: building a chunk is synchronous work that holds
 * the event loop, so a chunk stays small enough that requests wait little behind it.
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
            chunk.add(JSON.stringify(String(key))); // a key is text in the file whatever the map holds: a number would not be JSON
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

async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    await handle.sync().finally(() => handle.close());
  } catch {
    // Not every file system lets a directory be fsync'd; the rename is still atomic.
  }
}
