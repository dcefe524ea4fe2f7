import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { parseHolder } from './lock-file.js';
import type { LockHolder } from './lock-holder.js';
import { sleep } from './sleep.js';

/** How often a holder refreshes its lock, and how long a starter watches a lock that no one refreshes before taking it over. */
export interface LockTiming {
  beatMs: number;
  staleMs: number;
}

/**
 * A beat a second; five seconds unrefreshed make a holder in another pid namespace stale.
 * A restart of a container killed with SIGKILL (a new pid namespace) so waits 5 s
 * for its own old lock; a holder whose event loop stalls that long (a paused container)
 * finds its lock taken at its next beat and stops writing (see `watch`).
 */
export const LOCK_TIMING: LockTiming = { beatMs: 1_000, staleMs: 5_000 };

/** When the lock file was last refreshed (its mtime), with the holder it names; undefined when it is gone. */
function lockState(path: string): { mtimeMs: number; id: string } | undefined {
  let fd: number;
  try {
    // Opened, not stat'ed by name: on NFS an open revalidates the attributes (close-to-open), a stat may be served from the cache.
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const mtimeMs = fstatSync(fd).mtimeMs;
    const holder = parseHolder(readFileSync(fd, 'utf8'));
    return { mtimeMs, id: holder.id };
  } finally {
    closeSync(fd);
  }
}

/**
 * Watches the lock of a holder that cannot be checked by its pid for `staleMs`:
 * 'stopped' when nothing refreshed it in that time, 'beating' when its holder did,
 * 'changed' when it was replaced or removed meanwhile (start over). Only a change of the
 * lock's mtime counts, never its age: the holder stamps it with its own clock, which may
 * be minutes off this one's (another machine).
 */
export function heartbeatOf(path: string, holder: LockHolder, timing: LockTiming): 'stopped' | 'beating' | 'changed' {
  const first = lockState(path);
  if (first?.id !== holder.id) return 'changed';
  const step = Math.max(10, Math.min(100, timing.beatMs / 4));
  for (let waited = 0; waited < timing.staleMs; waited += step) {
    sleep(step);
    const now = lockState(path);
    if (now?.id !== holder.id) return 'changed';
    if (now.mtimeMs !== first.mtimeMs) return 'beating';
  }
  return 'stopped';
}
