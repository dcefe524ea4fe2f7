import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Low, Memory } from 'lowdb';
import { Journal } from './journal.js';
import { checkVersion, emptyData, migrate, SCHEMA_VERSION } from './schema.js';
import { SnapshotFile } from './snapshot-file.js';
import type { Collection, JournalOp, StoreData } from './types.js';

export interface StoreOptions {
  /** A file path, or `:memory:` to keep nothing. */
  path: string;
  /** fsync every journal append (survives power loss, not only a crash of the process). */
  fsync?: boolean;
  /**
   * Checkpoint (rewrite the data file) once the journal holds this many bytes, or as
   * many as the data file if that is more, so the cost of checkpoints stays
   * proportional to the changes whatever the size of the store. Default 64 MiB
   * (replayed at start in about half a second).
   */
  checkpointBytes?: number;
  onError?: (error: Error) => void;
}

/**
 * The sandbox's records, held in memory and made durable through a journal.
 *
 * A change is `put`/`delete`, then `commit()` appends it to the journal before the
 * request is answered. The readable JSON data file is rewritten in the background
 * (a checkpoint) when the journal grows, and on close; so the cost of a request does
 * not grow with the store. See docs/decisions/0001-journaled-store.md.
 *
 * @example
 * const store = await Store.open({ path: ':memory:' });
 * store.put('orders', '1', { order_no: '1' });
 * store.commit();
 */
export class Store {
  private readonly pending = new Map<string, JournalOp>();
  private checkpointing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly db: Low<StoreData>,
    private readonly journal: Journal | undefined,
    private readonly options: StoreOptions,
  ) {}

  static async open(options: StoreOptions): Promise<Store> {
    if (options.path === ':memory:') {
      const db = new Low<StoreData>(new Memory<StoreData>(), emptyData());
      return new Store(db, undefined, options);
    }
    const path = resolve(options.path);
    mkdirSync(dirname(path), { recursive: true });
    const db = new Low<StoreData>(new SnapshotFile(path), emptyData());
    await db.read();
    const fromVersion = checkVersion(db.data, path);
    db.data.journal_generation ??= 0;
    const journal = new Journal(path, db.data.journal_generation, options.fsync ?? false);
    const store = new Store(db, journal, options);
    // The journal holds changes in the file's own schema: replay them, then migrate the whole.
    journal.replay(db.data.journal_generation, (op) => store.apply(op));
    db.data = migrate(db.data, path);
    journal.open();
    // A migrated store is written out at once, so no journal of the old schema is replayed again.
    if (fromVersion < SCHEMA_VERSION) await store.checkpoint();
    return store;
  }

  get isPersistent(): boolean {
    return this.journal !== undefined;
  }

  get<T>(collection: string, key: string): T | undefined {
    return this.collection(collection)[key] as T | undefined;
  }

  /** Every record of a collection. */
  values<T>(collection: string): T[] {
    return Object.values(this.collection(collection)) as T[];
  }

  /** Every record of a collection with its key. */
  entries<T>(collection: string): Array<[string, T]> {
    return Object.entries(this.collection(collection)) as Array<[string, T]>;
  }

  count(collection: string): number {
    return Object.keys(this.collection(collection)).length;
  }

  put<T>(collection: string, key: string, value: T): void {
    this.collection(collection)[key] = value;
    this.track({ c: collection, k: key });
  }

  delete(collection: string, key: string): void {
    delete this.collection(collection)[key];
    this.track({ c: collection, k: key, d: 1 });
  }

  /** Appends every pending change to the journal. Call before acknowledging a change. */
  commit(): void {
    if (this.pending.size === 0) return;
    if (!this.journal) {
      this.pending.clear();
      return;
    }
    let lines = '';
    for (const op of this.pending.values()) {
      const value = op.d ? undefined : this.collection(op.c)[op.k];
      lines += `${JSON.stringify(value === undefined ? { c: op.c, k: op.k, d: 1 } : { c: op.c, k: op.k, v: value })}\n`;
    }
    this.pending.clear();
    this.journal.append(lines);
    const fileBytes = this.db.adapter instanceof SnapshotFile ? this.db.adapter.bytes : 0;
    if (this.journal.bytes >= Math.max(this.options.checkpointBytes ?? 64 * 2 ** 20, fileBytes)) void this.checkpoint();
  }

  /** Rewrites the data file from memory and drops the journal it now holds. */
  checkpoint(): Promise<void> {
    if (!this.journal) return Promise.resolve();
    this.checkpointing ??= this.writeCheckpoint(this.journal).finally(() => {
      this.checkpointing = undefined;
    });
    return this.checkpointing;
  }

  /** Commits, writes a final checkpoint and releases the journal. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.commit();
    await this.checkpointing;
    await this.checkpoint();
    this.closed = true;
    this.journal?.close();
  }

  private async writeCheckpoint(journal: Journal): Promise<void> {
    this.commit();
    const generation = journal.rotate();
    this.db.data.journal_generation = generation;
    try {
      await this.db.write();
      journal.removeBefore(generation);
    } catch (error) {
      this.options.onError?.(error as Error);
    }
  }

  private apply(op: JournalOp): void {
    const records = this.collection(op.c);
    if (op.d) delete records[op.k];
    else records[op.k] = op.v;
  }

  private track(op: JournalOp): void {
    this.pending.set(`${op.c}\u0000${op.k}`, op);
    if (this.pending.size === 1) queueMicrotask(() => this.commit());
  }

  private collection(name: string): Collection {
    const existing = this.db.data[name];
    if (typeof existing === 'object') return existing;
    const created: Collection = {};
    this.db.data[name] = created;
    return created;
  }
}
