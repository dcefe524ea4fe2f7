import { freeze } from '../freeze.js';
import { copyWith } from './file/index.js';
import type { Stored } from '../../records/index.js';

/** A stored record as the port gives it: frozen, with a version (records of older files count as version 0). */
export function stored<T>(value: T | undefined): Stored<T> | undefined {
  if (value === undefined) return undefined;
  const record = value as T & { version?: number };
  if (record.version === undefined) {
    if (!Object.isFrozen(record)) record.version = 0;
    else return freeze(copyWith(record, { version: 0 })) as Stored<T>;
  }
  return freeze(record) as Stored<T>;
}
