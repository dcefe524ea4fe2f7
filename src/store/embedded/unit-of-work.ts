import { Conflict, domainMessages } from '../../shared/index.js';
import type { JournaledFile } from './file/index.js';
import { freeze } from '../freeze.js';
import { stored } from './stored.js';

/** One change of a unit of work: the record before and after (undefined: absent). */
export interface Change {
  collection: string;
  key: string;
  before: unknown;
  after: unknown;
}

/**
 * How repositories read and write: `get` sees the unit's own writes first, then what
 * is committed; `put`/`remove` are kept in the unit until it commits.
 */
export interface Access {
  get<T>(collection: string, key: string): T | undefined;
  put(collection: string, key: string, value: unknown): void;
  remove(collection: string, key: string): void;
  /** Whether this access may write (false outside a transaction). */
  readonly writable: boolean;
  /**
   * The records of `collection` this unit wrote, as committed before it and as written
   * (undefined: absent): what a count kept in the indexes, which hold committed records
   * only, adds for the unit's own writes. Absent outside a transaction.
   */
  written?(collection: string): Iterable<{ before: unknown; after: unknown }>;
}

/** Reads what is committed; writing through it is a programming error (use a transaction). */
export class CommittedAccess implements Access {
  readonly writable = false;

  constructor(private readonly store: JournaledFile) {}

  get<T>(collection: string, key: string): T | undefined {
    return this.store.get<T>(collection, key);
  }

  put(): void {
    throw new Error('Writes go through storage.transaction()');
  }

  remove(): void {
    throw new Error('Writes go through storage.transaction()');
  }
}

interface Write {
  collection: string;
  key: string;
  value: unknown;
}

/** The writes of one transaction, applied to the store only when it commits. */
export class UnitOfWork implements Access {
  readonly writable = true;
  private writes = new Map<string, Write>();

  /**
   * @param parts Whether the unit is made of parts (`EmbeddedStorage.inOneUnit`): each
   * transaction joined to it can then be undone alone (`mark`, `undoTo`).
   */
  constructor(
    private readonly store: JournaledFile,
    readonly parts = false,
  ) {}

  /** The unit's writes as they are now, for `undoTo`. */
  mark(): ReadonlyMap<string, Write> {
    return new Map(this.writes);
  }

  /** Drops every write made since `mark` (a part that threw). */
  undoTo(mark: ReadonlyMap<string, Write>): void {
    this.writes = new Map(mark);
  }

  get<T>(collection: string, key: string): T | undefined {
    const write = this.writes.get(`${collection}\u0000${key}`);
    return write ? (write.value as T | undefined) : this.store.get<T>(collection, key);
  }

  put(collection: string, key: string, value: unknown): void {
    this.writes.set(`${collection}\u0000${key}`, { collection, key, value: freeze(value) });
  }

  remove(collection: string, key: string): void {
    this.writes.set(`${collection}\u0000${key}`, { collection, key, value: undefined });
  }

  *written(collection: string): Iterable<{ before: unknown; after: unknown }> {
    for (const write of this.writes.values()) {
      if (write.collection === collection) yield { before: this.store.get(collection, write.key), after: write.value };
    }
  }

  get empty(): boolean {
    return this.writes.size === 0;
  }

  /**
   * Writes every change to the store and its journal. When the journal write fails the
   * store rolls the changes back and this throws `StoreUnavailable`; nothing of the unit
   * is then applied.
   */
  commit(): Change[] {
    const changes: Change[] = [];
    for (const { collection, key, value } of this.writes.values()) {
      const before = value === undefined ? this.store.delete(collection, key) : this.store.put(collection, key, value);
      changes.push({ collection, key, before, after: value });
    }
    this.store.commit();
    return changes;
  }
}

/** Reads a record with a version for an update, and checks it is the one given. */
export function checkVersion(access: Access, collection: string, key: string, version: number, what: string): void {
  const current = stored(access.get<{ version?: number }>(collection, key));
  if (!current || current.version !== version) throw new Conflict(domainMessages.staleVersion(what));
}
