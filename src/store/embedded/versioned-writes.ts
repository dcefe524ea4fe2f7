import { Conflict } from '../../shared/index.js';
import { copyWith } from './file/index.js';
import { stored } from './stored.js';
import { checkVersion, type Access } from './unit-of-work.js';
import type { Stored, Unversioned } from '../../records/index.js';

/** Inserts a record that must not exist yet. */
export function insertNew<T>(access: Access, collection: string, key: string, value: Unversioned<T>, what: string): Stored<T> {
  if (access.get(collection, key) !== undefined) throw new Conflict(`${what} already exists.`);
  const record = copyWith(value, { version: 1 });
  access.put(collection, key, record);
  return stored(record as T)!;
}

/** Writes a record read earlier at its version. */
export function updateAt<T>(access: Access, collection: string, key: string, value: Stored<T>, what: string): Stored<T> {
  checkVersion(access, collection, key, value.version, what);
  const record = copyWith(value, { version: value.version + 1 });
  access.put(collection, key, record);
  return stored(record as T)!;
}
