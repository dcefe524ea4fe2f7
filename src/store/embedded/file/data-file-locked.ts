import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { pidCheckable, type LockHolder } from './lock-holder.js';

/** A second sandbox started on a data file that a live sandbox holds. */
export class DataFileLocked extends Error {
  override name = 'DataFileLocked';
  constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {
    const local = holder.host === hostname();
    const elsewhere = local && !pidCheckable(holder);
    const copied = holder.path !== undefined && holder.path !== path && !sameFile(`${holder.path}.lock`, `${path}.lock`);
    super(
      holder.foreign
        ? `The lock file ${path}.lock is not a sandbox's lock (something else wrote it), so the sandbox cannot tell whether the data file ${path} is in use and leaves it alone. ` +
            `If no sandbox uses it, delete ${path}.lock and start again.`
        : copied
        ? `The data file ${path} has a lock that names ${holder.path}, held by a sandbox (pid ${holder.pid} on host ${holder.host}, since ${holder.since}). ` +
            `If this folder is a copy of that one (a backup or a snapshot taken while it ran), delete ${path}.lock and start again; ` +
            'if it is the same folder mounted at another path, stop that sandbox first.'
        : `The data file ${path} is in use by another sandbox (pid ${holder.pid} on host ${holder.host}` +
            (elsewhere ? ', in another container, pid namespace or machine: its lock is being kept fresh' : '') +
            `, since ${holder.since}). ` +
            (local
              ? 'Stop that sandbox first, or start this one with another --data file (or --data :memory:).'
              : `Stop it first, or start with another --data file. If no sandbox runs on ${holder.host} any more, delete ${path}.lock ` +
                '(in Docker, give the container a fixed --hostname so that a recreated container recognises its own lock).'),
    );
  }
}

/** Whether two paths are one file here (a folder mounted at two paths, or reached through a link): then a lock naming the other path was not copied. */
function sameFile(a: string, b: string): boolean {
  try {
    const [one, two] = [statSync(a, { bigint: true }), statSync(b, { bigint: true })];
    return one.dev === two.dev && one.ino === two.ino;
  } catch {
    return false;
  }
}
