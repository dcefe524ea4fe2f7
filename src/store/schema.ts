import { DataFileError, type StoreData } from './types.js';

/** The schema version this build writes. */
export const SCHEMA_VERSION = 1;

/** Collections every data file has. */
export const COLLECTIONS = ['meta', 'orders', 'deliveries'] as const;

type Migration = (data: StoreData) => StoreData;

/** `MIGRATIONS[n]` turns a version-n file into a version-(n+1) file. */
const MIGRATIONS: Record<number, Migration> = {};

/** An empty store of the current version. */
export function emptyData(): StoreData {
  const data: StoreData = { schema_version: SCHEMA_VERSION, journal_generation: 0 };
  for (const name of COLLECTIONS) data[name] = {};
  return data;
}

/**
 * Brings data read from a file up to the current schema version, one step at a time.
 * Refuses a file written by a newer sandbox rather than guess at it.
 */
export function migrate(data: StoreData, path: string): StoreData {
  let current: StoreData = { ...data, schema_version: data.schema_version ?? 0 };
  if (current.schema_version > SCHEMA_VERSION) {
    throw new DataFileError(
      `The data file ${path} has schema version ${current.schema_version}, newer than this sandbox (${SCHEMA_VERSION}). ` +
        'Upgrade the sandbox or start with another --data file.',
    );
  }
  while (current.schema_version < SCHEMA_VERSION) {
    const step = MIGRATIONS[current.schema_version];
    if (!step) throw new DataFileError(`No migration from schema version ${current.schema_version} (${path}).`);
    current = step(current);
  }
  for (const name of COLLECTIONS) current[name] ??= {};
  current.journal_generation ??= 0;
  return current;
}
