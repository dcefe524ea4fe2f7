import { chmodSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Owner read and write only: the data file holds tokens' records and webhook secrets. */
export const PRIVATE_MODE = 0o600;

/**
 * Makes the data file and its companions (`<data>.wal.N` journal segments, the
 * `<data>.lock`, temp files) private if an earlier version left them readable by
 * others (0644). Files the sandbox creates are 0600 from the start. Best effort: a file
 * this user cannot chmod is left as it is. Returns the files changed.
 */
export function restrictDataFiles(dataPath: string): string[] {
  const dir = dirname(dataPath);
  const name = basename(dataPath);
  const changed: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry !== name && !entry.startsWith(`${name}.`)) continue;
    const path = join(dir, entry);
    try {
      const stat = statSync(path);
      if (!stat.isFile() || (stat.mode & 0o077) === 0) continue;
      chmodSync(path, stat.mode & PRIVATE_MODE);
      changed.push(path);
    } catch {
      // Gone meanwhile, or not ours to change: the sandbox still works; nothing to do.
    }
  }
  return changed;
}
