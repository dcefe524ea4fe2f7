import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DataFileError, type Adapter, type StoreData } from './types.js';

const CHUNK_BYTES = 1 << 20;

/**
 * The readable JSON data file, one record per line. Writing streams the records in
 * chunks and yields between them, so a checkpoint of 100k orders never stalls the
 * event loop; the file is written to a temporary name, fsync'd, then renamed over
 * the old one, so a crash leaves either the old file or the new one.
 */
export class SnapshotFile implements Adapter<StoreData> {
  /** Size in bytes of the file as last read or written. */
  bytes = 0;

  constructor(readonly path: string) {}

  async read(): Promise<StoreData | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
      this.bytes = Buffer.byteLength(text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new DataFileError(`Cannot read the data file ${this.path}: ${(error as Error).message}`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new DataFileError(
        `The data file ${this.path} is not valid JSON (${(error as Error).message}). ` +
          'It was left untouched: repair or move it, or start with --data :memory:.',
      );
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new DataFileError(`The data file ${this.path} does not hold a JSON object. It was left untouched.`);
    }
    return data as StoreData;
  }

  async write(data: StoreData): Promise<void> {
    const tmp = `${this.path}.tmp-${process.pid}`;
    const file = await open(tmp, 'w');
    try {
      let chunk = `{"schema_version":${data.schema_version},"journal_generation":${data.journal_generation}`;
      for (const [name, records] of Object.entries(data)) {
        if (typeof records !== 'object') continue;
        chunk += `,\n${JSON.stringify(name)}:{`;
        let first = true;
        for (const key of Object.keys(records)) {
          const value = records[key];
          if (value === undefined) continue; // deleted while we were writing
          chunk += `${first ? '' : ','}\n${JSON.stringify(key)}:${JSON.stringify(value)}`;
          first = false;
          if (chunk.length >= CHUNK_BYTES) {
            await file.write(chunk);
            chunk = '';
          }
        }
        chunk += '}';
      }
      await file.write(`${chunk}\n}\n`);
      this.bytes = (await file.stat()).size;
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, this.path);
    await syncDirectory(dirname(this.path));
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
