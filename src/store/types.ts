/** A collection of records keyed by id, as it stands in the data file. */
export type Collection = Record<string, unknown>;

/** The whole store as the data file holds it. */
export interface StoreData {
  schema_version: number;
  /** Journal files with this generation or later hold changes newer than this file. */
  journal_generation: number;
  [collection: string]: Collection | number;
}

/**
 * lowdb's adapter: the whole contract of a storage back end (`read()`, `write(data)`).
 * Here `write` is only used for checkpoints; every change between them goes to the journal.
 */
export type { Adapter } from 'lowdb';

/** One change: put a record, or delete it when `d` is set. Replaying it twice is harmless. */
export interface JournalOp {
  c: string;
  k: string;
  v?: unknown;
  d?: 1;
}

export class DataFileError extends Error {
  override name = 'DataFileError';
}
