import { closeSync, linkSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { describeError, remedyFor, writeAllSync } from './files.js';
import type { LockHolder } from './lock-holder.js';
import { DataFileError, type StoreFileSystem } from './types.js';

/** The writes a lock makes: the seam where tests inject ENOSPC. */
export type LockWrites = Pick<StoreFileSystem, 'writeSync'>;

/** The holder recorded in the lock file, or undefined when there is none (or it vanished meanwhile). */
export function readHolder(path: string): LockHolder | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const described = describeError(error);
    throw new DataFileError(`Cannot read the lock file ${path} (${described}). ${remedyFor(described, dirname(path))}`, { cause: error });
  }
  return parseHolder(text);
}

/** The holder a lock file's text names. */
export function parseHolder(text: string): LockHolder {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const holder = parsed as Partial<LockHolder> | undefined;
  if (typeof holder === 'object' && holder !== null && Number.isSafeInteger(holder.pid) && typeof holder.host === 'string' && typeof holder.since === 'string') return { ...holder, id: String(holder.id ?? '') } as LockHolder;
  // Written by something else than a sandbox (link(2) never shows a half-written lock): never guess it stale.
  return { pid: 0, host: 'unknown (the lock file is not a sandbox lock)', start: null, since: 'unknown', id: '', foreign: true };
}

/** Writes `holder` to a private temporary file; the caller links or renames it into place. A failed write removes it. */
export function writeTemp(path: string, holder: LockHolder, fs: LockWrites): string {
  const tmp = `${path}.tmp-${process.pid}-${holder.id}`;
  let fd: number;
  try {
    fd = openSync(tmp, 'wx', 0o600);
  } catch (error) {
    throw cannotWrite(path, tmp, error);
  }
  try {
    writeAllSync(fs, fd, Buffer.from(`${JSON.stringify(holder)}\n`));
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw cannotWrite(path, tmp, error);
  }
  closeSync(fd);
  return tmp;
}

export const cannotWrite = (path: string, file: string, error: unknown) =>
  new DataFileError(`Cannot write the lock file ${path} (${describeError(error)}, writing ${file}); nothing was left behind. ${remedyFor(describeError(error), dirname(path))}`, {
    cause: error,
  });

/** Creates the lock with link(2): fails, returning false, when a lock exists. */
export function createExclusive(path: string, holder: LockHolder, fs: LockWrites): boolean {
  const tmp = writeTemp(path, holder, fs);
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw cannotWrite(path, path, error);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** How long ago a file was last changed (0 when it is gone). */
export function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}
