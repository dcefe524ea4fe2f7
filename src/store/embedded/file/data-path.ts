import { lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { describeError, remedyFor } from './files.js';
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
  try {
    makeFolder(dirname(linkTarget(given)));
  } catch (error) {
    // A path that cannot lead to a folder (a part of it is a file, or it is under /proc), or one
    // this user may not enter or make (EACCES): said with what to do about it.
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'EACCES' || code === 'EPERM') {
      throw new DataFileError(`The data file ${given} (--data) cannot be reached (${message}). ${remedyFor(describeError(error), dirname(resolve(given)))}`);
    }
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    throw new DataFileError(
      `The data file ${given} (--data) cannot be kept there: no folder can be made for it (${message}). ` +
        'Give --data (SANDBOX_DATA) a file in a folder that exists or can be made, or --data :memory:.',
    );
  }
  const real = realDataPath(given);
  refuseFilesBesideLink(given, real);
  if (isDirectory(real)) {
    throw new DataFileError(
      `The data file ${real}${real === resolve(given) ? '' : ` (--data ${given})`} is a directory: --data names the file itself ` +
        `(for example --data ${join(real, 'sandbox.json')}). It was left untouched.`,
    );
  }
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
 * Creates `dir` and its missing parents, as `mkdir -p` does, but ends with the error where
 * Node's recursive mkdir loops for ever at full CPU (deaf to SIGTERM): under a parent that
 * exists but cannot hold the child, such as a path under /proc or below a link to an
 * unmounted volume, every try answers ENOENT.
 */
function makeFolder(dir: string): void {
  const made = (path: string): void => {
    try {
      mkdirSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(path).isDirectory()) throw error;
    }
  };
  try {
    made(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(dir) === dir) throw error;
    makeFolder(dirname(dir));
    made(dir);
  }
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

/**
 * The absolute path `given` leads to once every symbolic link to the file itself is
 * followed. Each link's target is read from the link's real folder, as the kernel reads
 * it: `../shared/x.json` in a folder reached through a symbolic link (a deploy's
 * `current -> releases/v1`) means the real folder's parent, not the link path's.
 */
function linkTarget(given: string): string {
  let path = realFolder(resolve(given));
  for (let links = 0; isSymbolicLink(path); links += 1) {
    if (links === MAX_LINKS) throw new DataFileError(`The data file ${given} is a loop of symbolic links. Start with another --data file.`);
    path = realFolder(resolve(dirname(path), readlinkSync(path)));
  }
  return path;
}

/** `path` in its folder's real path (its folder's links followed), or as it is while that folder does not exist. */
function realFolder(path: string): string {
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
}

/**
 * Refuses a start on the real file while journal segments or a lock sit beside the link
 * `given` (its name, in its real folder): an earlier version kept them there, so a crash
 * of one left acknowledged changes that this version would never read, and a sandbox of
 * that version still running there would not see this one's lock.
 */
function refuseFilesBesideLink(given: string, real: string): void {
  const beside = realFolder(resolve(given));
  if (beside === real) return;
  const name = basename(beside);
  let names: string[];
  try {
    names = readdirSync(dirname(beside));
  } catch {
    return;
  }
  const left = names.filter((n) => n === `${name}.lock` || new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.wal\\.\\d+$`).test(n));
  if (left.length === 0) return;
  throw new DataFileError(
    `The data file ${real} is reached through the link ${given}, and ${left.map((n) => join(dirname(beside), n)).join(', ')} sit beside the link: ` +
      'an earlier sandbox kept its journal and lock there. If no sandbox runs on the link any more, start that earlier version once and stop it cleanly ' +
      `(its data is then in ${real}), or move its journal segments beside ${real} with their names changed to ${basename(real)}.wal.<n> and delete the lock. Nothing was changed.`,
  );
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
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
