import { renameSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { nodeFileSystem } from './files.js';
import { LOCK_TIMING, type LockTiming } from './heartbeat.js';
import { cannotWrite, createExclusive, readHolder, writeTemp, type LockWrites } from './lock-file.js';
import { isStale, pidCheckable, type LockHolder } from './lock-holder.js';

/**
 * Replaces the stale lock `stale` with `me`. 'taken' when done; 'changed' when the lock
 * no longer names `stale` (start over); 'busy' while a live starter takes it over.
 * Exported for the tests of the race between two starters.
 */
export function takeOver(path: string, stale: LockHolder, me: LockHolder, fs: LockWrites = nodeFileSystem, timing: LockTiming = LOCK_TIMING): 'taken' | 'changed' | 'busy' {
  for (let n = 0; ; n += 1) {
    const marker = `${path}.takeover-${stale.id}-${n}`;
    if (!createExclusive(marker, me, fs)) {
      const creator = readHolder(marker);
      if (creator !== undefined && markerAbandoned(marker, creator, timing)) continue; // its creator died mid take-over: pass it over
      return 'busy';
    }
    // Holding the marker, no one else can replace the stale lock: check it is still there, then replace it.
    try {
      if (readHolder(path)?.id !== stale.id) return 'changed';
      const tmp = writeTemp(path, me, fs);
      try {
        renameSync(tmp, path);
      } catch (error) {
        rmSync(tmp, { force: true });
        throw cannotWrite(path, path, error);
      }
      return 'taken';
    } finally {
      rmSync(marker, { force: true });
    }
  }
}

/**
 * Whether a take-over marker's creator died mid take-over: it is stale (see `isStale`),
 * or, in another pid namespace, the marker has stood `staleMs` (a take-over takes
 * microseconds).
 */
function markerAbandoned(marker: string, creator: LockHolder, timing: LockTiming): boolean {
  if (isStale(creator)) return true;
  if (creator.host !== hostname() || pidCheckable(creator)) return false;
  try {
    return Date.now() - statSync(marker).mtimeMs >= timing.staleMs;
  } catch {
    return true; // gone meanwhile: try it again
  }
}
