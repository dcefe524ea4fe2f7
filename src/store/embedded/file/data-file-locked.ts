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
    super(
      `The data file ${path} is in use by another sandbox (pid ${holder.pid} on host ${holder.host}` +
        (elsewhere ? ', in another container, pid namespace or machine: its lock is being kept fresh' : '') +
        `, since ${holder.since}). ` +
        (local
          ? 'Stop that sandbox first, or start this one with another --data file (or --data :memory:).'
          : `Stop it first, or start with another --data file. If no sandbox runs on ${holder.host} any more, delete ${path}.lock ` +
            '(in Docker, give the container a fixed --hostname so that a recreated container recognises its own lock).'),
    );
  }
}
