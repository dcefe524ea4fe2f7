import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

/** A pid that was alive a moment ago and is not any more. */
export function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

/**
 * Leaves the data file as a SIGKILL of its sandbox would: the lock file stays, naming a
 * process that is gone. The store object is abandoned without close(), so nothing is
 * flushed or checkpointed.
 */
export function crash(dataPath: string): void {
  const lockPath = `${dataPath}.lock`;
  const holder = JSON.parse(readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(lockPath, JSON.stringify({ ...holder, pid: deadPid() }));
}
