import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { Conflict } from '../../shared/index.js';
import type { Repositories } from '../port.js';
import type { Connections } from './connections.js';
import type { Db } from './db.js';
import { PgDeliveries } from './deliveries.js';
import type { JobNotices } from './job-notices.js';
import { PgJobs } from './jobs.js';
import { PgMeta } from './meta.js';
import { inOneTrip, type TxContext } from './one-trip.js';
import { PgOrders } from './orders.js';
import { codeOf, type Reachability } from './reachability.js';
import { isPointRead, PointReads } from './point-reads.js';
import { PgSettings, type Prefetched } from './settings.js';
import { statement } from './statements.js';

/** How often a unit of work that met a conflict (another replica wrote first) is tried in all. */
const ATTEMPTS = 4;
/** Errors that a new attempt of the unit of work resolves: a deadlock, a serialization failure. */
const RETRY_CODES = new Set(['40001', '40P01']);

/** The repositories that write outside any unit, the same in every one: counters (see PostgresStorage), the journal, the reports. */
export type SharedRepositories = Pick<Repositories, 'counters' | 'requests' | 'reports'>;

/**
 * Units of work as database transactions, each on one pooled connection, and the Db
 * every repository runs on: the running unit's, or else the pool's. Writes check
 * versions (`WHERE version = $n`), so a replica that read a record before another
 * changed it gets a Conflict, and the whole unit is tried again with fresh reads (up to
 * ATTEMPTS in all) before the Conflict reaches the caller.
 */
export class UnitsOfWork {
  private readonly current = new AsyncLocalStorage<TxContext>();
  /** Point reads of requests outside a unit, sent together (see PointReads). */
  private readonly points: PointReads;

  constructor(
    private readonly connections: Connections,
    private readonly reach: Reachability,
    private readonly notices: JobNotices,
    private readonly shared: SharedRepositories,
    /** The settings the current request read along with its clock, if any. */
    private readonly prefetched: () => Prefetched | undefined,
  ) {
    this.points = new PointReads(async () => {
      const release = await this.connections.permit();
      try {
        return { client: await this.connections.pool.connect(), release };
      } catch (error) {
        release();
        throw error;
      }
    }, () => this.connections.gateLane);
  }

  /** Statements outside a transaction: each on a pooled connection, committed at once. */
  readonly outside: Db = {
    query: <R>(text: string, values?: unknown[]) => this.reach.run(() => this.pooledQuery(text, values) as unknown as Promise<{ rows: R[]; rowCount: number | null }>),
    scheduled: (dueAt, clientId) => this.notices.announce([[dueAt, clientId]]),
    heavy: (fn) => this.connections.heavy(fn),
  };

  /** The Db of the work running now: its unit's, or `outside`. */
  readonly db = (): Db => {
    const tx = this.current.getStore();
    return tx ? this.txDb(tx) : this.outside;
  };

  /** Runs `fn` in a unit of work of its own, or in the one running now (joined: it commits with it). */
  readonly transaction = <T>(fn: (tx: Repositories) => Promise<T>): Promise<T> => {
    const joined = this.current.getStore();
    if (joined) return fn(joined.repos);
    return this.runUnit(fn);
  };

  /**
   * A statement outside a unit of work, on a connection of the work's own pool, committed
   * at once. One sent while a unit of work holds a connection (PgClocks reads through here
   * whatever runs; no unit does so now) does not wait in the gate: it goes to pg-pool,
   * which gives it the next connection given back, ahead of the requests holding none.
   */
  private async pooledQuery(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    const inUnit = this.current.getStore() !== undefined;
    if (!inUnit && isPointRead(text) && this.connections.own === this.connections.pool) return this.points.query(text, values);
    const release = inUnit ? () => undefined : await this.connections.permit();
    try {
      return await this.connections.own.query(statement(text, values));
    } finally {
      release();
    }
  }

  private txDb(tx: TxContext): Db {
    return {
      query: <R>(text: string, values?: unknown[]) => this.inUnit<R>(tx, text, values),
      later: (text, values) => void tx.later.push({ text, values }),
      newBatch: (batchId) => {
        if (tx.batches.has(batchId)) return false;
        tx.batches.add(batchId);
        return true;
      },
      scheduled: (dueAt, clientId) => void tx.scheduled.push([dueAt, clientId]),
    };
  }

  /** A statement of a unit of work, with the writes it holds back (see inOneTrip). */
  private async inUnit<R>(tx: TxContext, text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }> {
    const result = await inOneTrip(tx, text, values);
    this.reach.answered();
    return result as unknown as { rows: R[]; rowCount: number | null };
  }

  /** A unit of work with a permit of the gate, held through its attempts: a unit tried again does not wait its turn again. */
  private async runUnit<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    const release = await this.reach.run(() => this.connections.permit(), false, true);
    try {
      return await this.attempts(fn);
    } finally {
      release();
    }
  }

  private async attempts<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      // Not an answer of the database: the pool may hand out a connection it already had.
      const client = await this.reach.run(() => this.connections.own.connect(), false);
      const context: TxContext = { scheduled: [], client, begun: false, later: [], batches: new Set(), repos: undefined as unknown as Repositories };
      const db = (): Db => this.txDb(context);
      context.repos = {
        orders: new PgOrders(db),
        deliveries: new PgDeliveries(db),
        settings: new PgSettings(db, this.prefetched, true),
        counters: this.shared.counters,
        meta: new PgMeta(db),
        jobs: new PgJobs(db),
        requests: this.shared.requests,
        reports: this.shared.reports,
      };
      let broken = false;
      try {
        const result = await this.current.run(context, () => fn(context.repos));
        // A unit that wrote nothing (or only took numbers) has nothing to commit.
        if (context.begun || context.later.length > 0) {
          // A transaction that a failed statement aborted answers COMMIT with ROLLBACK.
          const committed = await inOneTrip(context, 'COMMIT');
          if (committed.command !== 'COMMIT') throw new Error(`The unit of work was rolled back at COMMIT (${committed.command}).`);
          this.reach.answered(true);
        }
        this.notices.announce(context.scheduled);
        return result;
      } catch (error) {
        if (context.begun) await client.query('ROLLBACK').catch(() => void (broken = true));
        const retry = attempt < ATTEMPTS && (error instanceof Conflict || RETRY_CODES.has(codeOf(error) ?? ''));
        if (retry) continue;
        throw this.reach.translate(error);
      } finally {
        client.release(broken);
      }
    }
  }
}
