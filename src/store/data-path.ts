import { lstatSync, mkdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DataFileError } from './types.js';

/** As many symbolic links as Linux follows in one path (ELOOP past it). */
const MAX_LINKS = 40;

/**
 * The path of the data file that `given` names, with every symbolic link followed: the
 * lock, the journal and the checkpoint's rename must all use it, so that a sandbox on a
 * link and one on its target take the same lock, and a checkpoint replaces the target
 * rather than the link. A file that does not exist yet (a link to one included) is the
 * real path of its folder, created if missing, and its name.
 *
 * Refuses a data file with other hard links: a lock keyed by one of its names would not
 * stop a sandbox started on another, and a checkpoint (a rename) would split them.
 *
 * @example
 * dataFilePath('./data/link.json'); // '/srv/sandbox/real.json' when link.json -> real.json
 */
export function dataFilePath(given: string): string {
  mkdirSync(dirname(linkTarget(given)), { recursive: true });
  const real = realDataPath(given);
  const links = hardLinks(real);
  if (links > 1) {
    throw new DataFileError(
      `The data file ${real}${real === resolve(given) ? '' : ` (--data ${given})`} has ${links} hard links: a sandbox started on another of its names ` +
        'would not see this one\'s lock, and each would lose the other\'s changes. It was left untouched: remove the other names ' +
        '(find them with `find / -samefile <file>`), or copy the file (cp) and start on the copy; a symbolic link (ln -s) is fine.',
    );
  }
  return real;
}

/**
 * The real path of the data file `given` names, as `dataFilePath` finds it, without
 * creating or checking anything: for readers of its files (the metrics' sizes). A folder
 * that does not exist leaves the path as the links lead.
 */
export function realDataPath(given: string): string {
  const path = linkTarget(given);
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
}

/** The absolute path `given` leads to once every symbolic link to the file itself is followed. */
function linkTarget(given: string): string {
  let path = resolve(given);
  for (let links = 0; isSymbolicLink(path); links += 1) {
    if (links === MAX_LINKS) throw new DataFileError(`The data file ${given} is a loop of symbolic links. Start with another --data file.`);
    path = resolve(dirname(path), readlinkSync(path));
  }
  return path;
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** How many names the file at `path` has (0: none yet). */
function hardLinks(path: string): number {
  try {
    return statSync(path).nlink;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}
