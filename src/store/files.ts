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
export function writeAllSync(fs: StoreFileSystem, fd: number, buffer: Uint8Array): void {
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

/** An error as health reports it: its errno code first, e.g. `ENOSPC: no space left on device, write`. */
export function describeError(error: unknown): string {
  const code = errnoOf(error);
  const message = (error as Error | undefined)?.message ?? String(error);
  return message.startsWith(code) ? message : `${code}: ${message}`;
}
