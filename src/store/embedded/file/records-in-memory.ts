import type { Low } from 'lowdb';
import { opOf } from './journal-patch.js';
import { copyWith } from './record-copy.js';
import { RecordMap } from './record-map.js';
import type { SnapshotChunk } from './snapshot-file.js';
import type { JournalOp, JournaledFileData, Records } from './types.js';

/** What the records in memory take of the journaled file's options (see JournaledFileOptions). */
export interface InMemoryOptions {
  pack?: (collection: string, value: unknown, current?: unknown) => unknown;
  onError?: (error: Error) => void;
}

/** A change not committed yet: the record's value before it and after it, as kept (undefined: none). */
export interface PendingChange {
  op: JournalOp;
  before: unknown;
  after: unknown;
}

/**
 * The journaled file's records as held in memory, one RecordMap per collection, with the
 * changes made since the last commit. A change is made in memory at once and noted with
 * the value it replaced, so a failed commit can roll it back and a checkpoint can write
 * the record as last committed. What makes the changes durable (`commit`) is the
 * journaled file's.
 */
export abstract class RecordsInMemory<Options extends InMemoryOptions> {
  /** Changed records since the last commit, by collection and key. */
  protected readonly pending = new Map<string, PendingChange>();

  protected constructor(
    protected readonly db: Low<JournaledFileData>,
    protected readonly options: Options,
  ) {}

  /** Saves every pending change, or rolls them back and throws. */
  abstract commit(): void;
  get<T>(collection: string, key: string): T | undefined {
    return this.collection(collection).get(key) as T | undefined;
  }

  /** Every record of a collection, in the order they were first put. */
  values<T>(collection: string): T[] {
    return this.collection(collection).valueList() as T[];
  }

  /** Every record of a collection with its key, in the order they were first put. */
  entries<T>(collection: string): Array<[string, T]> {
    return [...this.collection(collection).entries()] as Array<[string, T]>;
  }

  count(collection: string): number {
    return this.collection(collection).size;
  }

  /**
   * Sets a record; saved by the next `commit()`. Put a new object rather than one
   * changed in place: a failed commit restores the value the collection held before,
   * which an object changed in place no longer is. Returns the record it replaces, as kept
   * (undefined: none).
   */
  put<T>(collection: string, key: string, value: T): unknown {
    const records = this.collection(collection);
    const after = this.kept(collection, value, records.get(key));
    const current = this.track({ c: collection, k: key }, records, after);
    records.set(key, after);
    return current;
  }

  /**
   * Puts or removes each write's record at once, as `put` or `delete` would but noting no
   * pending change (see JournaledFile.commitWrites), its journal op added to `ops` and the
   * record it replaced, as kept, set as its `before`. Returns the undo of what it applied; a
   * record the store refuses (`pack` throws) undoes those before it and is thrown as it is.
   */
  protected applied(writes: ReadonlyArray<{ collection: string; key: string; before: unknown; after: unknown }>, ops: JournalOp[]): () => void {
    let applied = 0;
    const undo = () => {
      for (let i = applied - 1; i >= 0; i--) {
        const { collection, key, before } = writes[i]!;
        if (before === undefined) this.collection(collection).delete(key);
        else this.collection(collection).set(key, before);
      }
    };
    try {
      for (const write of writes) {
        const records = this.collection(write.collection);
        const current = records.get(write.key);
        write.before = current;
        const after = write.after === undefined ? undefined : this.kept(write.collection, write.after, current);
        if (after === undefined) records.delete(write.key);
        else records.set(write.key, after);
        applied += 1;
        ops.push(opOf(write.collection, write.key, current, after));
      }
    } catch (error) {
      undo();
      throw error;
    }
    return undo;
  }

  /** A record put in the collection as it is kept (see InMemoryOptions.pack), `current` the one it replaces; throws when the store refuses it. */
  protected kept(collection: string, value: unknown, current: unknown): unknown {
    return this.options.pack ? this.options.pack(collection, value, current) : value;
  }

  /** Removes a record; saved by the next `commit()`. Returns the record removed, as kept (undefined: none). */
  delete(collection: string, key: string): unknown {
    const records = this.collection(collection);
    const current = this.track({ c: collection, k: key, d: 1 }, records, undefined);
    records.delete(key);
    return current;
  }

  /**
   * A collection's chunks as a checkpoint takes them: each taken when its turn comes, with
   * its records when no change is pending then (every record there is committed), else
   * with its keys only, each record then looked up as last committed.
   */
  protected *committedChunks(records: RecordMap<unknown>): Generator<SnapshotChunk> {
    for (const chunk of records.entryChunks()) yield this.pending.size === 0 ? chunk : { keys: chunk.keys };
  }

  /** The value of a record as last committed: a pending change shows its value from before. */
  protected committedValue(name: string, key: string): unknown {
    const pending = this.pending.get(`${name}\u0000${key}`);
    return pending ? pending.before : this.collection(name).get(key);
  }

  /** Sets every record a pending change touched back to its value before, and forgets the changes. */
  rollBack(): void {
    for (const { op, before } of this.pending.values()) {
      const records = this.collection(op.c);
      if (before === undefined) records.delete(op.k);
      else records.set(op.k, before);
    }
    this.pending.clear();
  }

  /** Applies a change read from the journal (at the start, before anything is pending). */
  protected apply(op: JournalOp): void {
    const records = this.collection(op.c);
    if (op.d) {
      records.delete(op.k);
      return;
    }
    const current = records.get(op.k);
    let value = op.v;
    if (op.p !== undefined) {
      // A record a fuzzy checkpoint saw deleted: an op later in the journal (its delete, or a put) sets what it became.
      if (typeof current !== 'object' || current === null) return;
      // Every field in the object itself, as the store's other copies (see copyWith).
      value = copyWith(current, op.p);
    }
    records.set(op.k, this.options.pack ? this.options.pack(op.c, value, current) : value);
  }

  /** Notes a change to `records` (the collection `op.c`) before it is made; returns the record it replaces. */
  private track(op: JournalOp, records: Records, after: unknown): unknown {
    const id = `${op.c}\u0000${op.k}`;
    const known = this.pending.get(id);
    const current = records.get(op.k);
    this.pending.set(id, { op, before: known ? known.before : current, after });
    if (this.pending.size === 1 && !known) queueMicrotask(() => this.commitReporting());
    return current;
  }

  /** A commit no caller waits on (the microtask after a put, close): a failure goes to onError. */
  protected commitReporting(): void {
    try {
      this.commit();
    } catch (error) {
      this.options.onError?.(error as Error);
    }
  }

  /** A collection as a RecordMap: one still a plain object (a new store, an older file's, a migrated one) becomes one. */
  protected collection(name: string): Records {
    const existing = this.db.data[name];
    if (existing instanceof RecordMap) return existing;
    const records: Records = new RecordMap(typeof existing === 'object' ? Object.entries(existing) : []);
    this.db.data[name] = records;
    return records;
  }
}
