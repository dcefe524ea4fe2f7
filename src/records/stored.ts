/**
 * A record as a repository of the storage port gives it: read-only, with the version it
 * was read at (writing it back checks that version).
 */
export type Stored<T> = Readonly<T> & { readonly version: number };

/** A value about to be written: a record read earlier (its version is checked), or a new one. */
export type Unversioned<T> = Omit<T, 'version'>;

/** One page of a listing, newest first; `next_cursor` fetches the next page, null at the end. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  /** How many records match the filter in all (the caller's own records only). */
  total: number;
}
