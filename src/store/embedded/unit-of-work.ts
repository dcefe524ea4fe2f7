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
  private readonly writes = new Map<string, Write>();
  /** For each part begun and not ended, innermost last: the unit's write of each record the part wrote, as it was before (undefined: none). */
  private readonly undo: Array<Map<string, Write | undefined>> = [];
  /** The record whose id was made last, and that id: a write mostly follows a read of the same record (a version check, a counter). */
  private lastCollection: string | undefined;
  private lastKey: string | undefined;
  private lastId = '';

  constructor(private readonly store: JournaledFile) {}

  /**
   * Starts a part (`EmbeddedStorage.inOneUnit`): until `endPart`, the first write of each
   * record remembers what the unit held for it before, so the part can be undone alone.
   */
  beginPart(): void {
    this.undo.push(new Map());
  }

  /** Ends the innermost part: undone, every write it made is dropped; kept, its writes belong to the part around it (if any). */
  endPart(undo: boolean): void {
    const log = this.undo.pop();
    if (!log) return;
    if (undo) {
      for (const [id, before] of log) {
        if (before === undefined) this.writes.delete(id);
        else this.writes.set(id, before);
      }
      return;
    }
    const outer = this.undo.at(-1);
    if (outer) for (const [id, before] of log) if (!outer.has(id)) outer.set(id, before);
  }

  /** Before a write in a part: what the unit held for the record, the first time the part writes it. */
  private remember(id: string): void {
    const log = this.undo.at(-1);
    if (log !== undefined && !log.has(id)) log.set(id, this.writes.get(id));
  }

  /** The id of a record in `writes` and the undo logs. */
  private idOf(collection: string, key: string): string {
    if (collection === this.lastCollection && key === this.lastKey) return this.lastId;
    this.lastCollection = collection;
    this.lastKey = key;
    return (this.lastId = `${collection}\u0000${key}`);
  }

  get<T>(collection: string, key: string): T | undefined {
    const write = this.writes.get(this.idOf(collection, key));
    return write ? (write.value as T | undefined) : this.store.get<T>(collection, key);
  }

  put(collection: string, key: string, value: unknown): void {
    const id = this.idOf(collection, key);
    if (this.undo.length > 0) this.remember(id);
    this.writes.set(id, { collection, key, value: freeze(value) });
  }

  remove(collection: string, key: string): void {
    const id = this.idOf(collection, key);
    if (this.undo.length > 0) this.remember(id);
    this.writes.set(id, { collection, key, value: undefined });
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
   * store rolls the changes back and this throws `StoreUnavailable`; when the store
   * refuses a record, it throws that error; either way nothing of the unit is applied.
   */
  commit(): Change[] {
    const changes: Change[] = [];
    for (const { collection, key, value } of this.writes.values()) changes.push({ collection, key, before: undefined, after: value });
    this.store.commitWrites(changes);
    return changes;
  }
}

/** Reads a record with a version for an update, and checks it is the one given. */
export function checkVersion(access: Access, collection: string, key: string, version: number, what: string): void {
  const current = stored(access.get<{ version?: number }>(collection, key));
  if (!current || current.version !== version) throw new Conflict(domainMessages.staleVersion(what));
}
