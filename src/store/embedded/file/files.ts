import { fsync, fsyncSync, ftruncateSync, write, writeSync } from 'node:fs';
import type { StoreFileSystem } from './types.js';

/** The real file system (node:fs). */
export const nodeFileSystem: StoreFileSystem = {
  writeSync: (fd, buffer, offset, length) => writeSync(fd, buffer, offset, length),
  write: (fd, buffer, offset, length) =>
    new Promise((resolve, reject) => write(fd, buffer, offset, length, null, (error, n) => (error ? reject(error) : resolve(n)))),
  fsyncSync: (fd) => fsyncSync(fd),
  fsync: (fd) => new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve()))),
  ftruncateSync: (fd, length) => ftruncateSync(fd, length),
};

/** Writes all of `buffer` synchronously, looping over short writes. */
export function writeAllSync(fs: Pick<StoreFileSystem, 'writeSync'>, fd: number, buffer: Uint8Array): void {
  for (let offset = 0; offset < buffer.length; ) offset += progress(fs.writeSync(fd, buffer, offset, buffer.length - offset));
}

/** Writes all of `buffer`, looping over short writes. */
export async function writeAll(fs: StoreFileSystem, fd: number, buffer: Uint8Array): Promise<void> {
  for (let offset = 0; offset < buffer.length; ) offset += progress(await fs.write(fd, buffer, offset, buffer.length - offset));
}

/** A write of 0 bytes would loop for ever: take it for the full disk it means. */
function progress(written: number): number {
  if (written > 0) return written;
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}

/** The errno code of an error, or EUNKNOWN. */
export const errnoOf = (error: unknown): string => (error as NodeJS.ErrnoException | undefined)?.code ?? 'EUNKNOWN';

/**
 * What to do about a failed file operation, by its errno code: free space for a full disk,
 * access for a refused one, a file for a directory. For start-up messages.
 */
export function remedyFor(description: string, dir: string): string {
  const code = /^[A-Z]+/.exec(description)?.[0] ?? '';
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'Free some space and start again.';
  if (code === 'EACCES' || code === 'EPERM') {
    const uid = process.getuid?.();
    return `The sandbox's user${uid === undefined ? '' : ` (uid ${uid})`} may not read or write there: give it access to ${dir} (its files and the folder), or start with another --data.`;
  }
  if (code === 'EROFS') return `${dir} is on a read-only file system: start with --data on a writable one.`;
  if (code === 'EISDIR') return 'A directory stands where the sandbox keeps a file: move it away.';
  return 'Fix the cause and start again.';
}

/** An error as health reports it: its errno code first, e.g. `ENOSPC: no space left on device, write`. */
export function describeError(error: unknown): string {
  const code = errnoOf(error);
  const message = (error as Error | undefined)?.message ?? String(error);
  return message.startsWith(code) ? message : `${code}: ${message}`;
}

/** A `Utf8Chunk` whose buffer has grown past this lets it go once its bytes are taken. */
const CHUNK_KEEPS = 4 * 1024 * 1024;
/** Texts longer than this are measured (`Buffer.byteLength`) rather than given 3 bytes a character. */
const EXACT_FROM = 64 * 1024;

/**
 * Bytes to write, built up from texts: each is encoded as UTF-8 straight into one buffer
 * that is reused, for a writer that is done with the bytes before it adds more (a
 * synchronous write, or an awaited one): the view `take` returns is overwritten by the
 * next `add`, so a writer that kept it for later would write other bytes. A journal line
 * or checkpoint chunk built as a string by `+=` is a rope that `Buffer.from` must first
 * copy into one flat string, and the buffer it then makes is memory outside V8's heap that counts toward starting V8's
 * next full collection: under a create load with a checkpoint now and then, those copies
 * would be a large share of what outlives V8's young generation.
 *
 * @example
 * const chunk = new Utf8Chunk();
 * chunk.add(JSON.stringify(ops));
 * chunk.add('\n');
 * writeAllSync(fs, fd, chunk.take());
 */
export class Utf8Chunk {
  #buffer: Buffer;
  #length = 0;

  constructor(private readonly initial = 64 * 1024) {
    this.#buffer = Buffer.allocUnsafeSlow(initial);
  }

  /** Bytes added since the last `take`. */
  get length(): number {
    return this.#length;
  }

  add(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8: a short text is given that room
    // without counting; a long one (a partner's big body) is counted, so a line of N ASCII
    // bytes takes N bytes here, not 3N.
    const needed = this.#length + (text.length <= EXACT_FROM ? text.length * 3 : Buffer.byteLength(text));
    if (needed > this.#buffer.length) {
      const grown = Buffer.allocUnsafeSlow(needed > CHUNK_KEEPS ? needed : Math.max(needed, 2 * this.#buffer.length));
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    this.#length += this.#buffer.write(text, this.#length);
  }

  /** Drops the bytes added since the last `take` (a line that could not be finished). */
  clear(): void {
    this.#length = 0;
    if (this.#buffer.length > CHUNK_KEEPS) this.#buffer = Buffer.allocUnsafeSlow(this.initial);
  }

  /** The bytes added since the last `take`, as a view that the next `add` overwrites; the chunk starts empty again. */
  take(): Buffer {
    const bytes = this.#buffer.subarray(0, this.#length);
    this.clear();
    return bytes;
  }
}
