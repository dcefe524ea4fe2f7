import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Conflict, domainMessages, Unavailable } from '../../shared/index.js';
import type { ClientSettingsRepository, DeliveryRepository, JobRepository, MetaRepository, OrderRepository, Repositories, ReportRepository, RequestScope, Storage, StorageHealth } from '../port.js';
import { CLOCKS_CHANNEL, PgClocks } from './clocks.js';
import { FairGate, PermitTimeout } from './fair-gate.js';
import { PgReports } from './reports.js';
import { PgCounters } from './counters.js';
import { STALE_VERSION, type Db } from './db.js';
import { PgDeliveries } from './deliveries.js';
import { PgJobs } from './jobs.js';
import { PgMeta } from './meta.js';
import { PgOrders } from './orders.js';
import { PgRequestLog } from './requests.js';
import { PgSettings, type Prefetched } from './settings.js';
import { migrate } from './schema.js';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Most request-journal entries kept per client. */
  requestLogSize: number;
  /** Connections of this replica's pool. Default 10. */
  poolSize?: number;
  /**
   * How long a connection is waited for, a new one or, with all of a pool's connections
   * busy, a free one; then the request answers 503. Default 5,000 ms.
   */
  connectionTimeoutMs?: number;
  /** Told about failures no caller sees (a dropped LISTEN connection). */
  onError?: (error: unknown) => void;
}

/** The channel replicas are told on when a job is scheduled: its due time. */
const JOBS_CHANNEL = 'sandbox_jobs';
/** How long scheduled jobs are gathered before one NOTIFY tells the other replicas of them all (ms). */
const NOTICE_MS = 20;
/**
 * Connections of a replica's background work (jobs, webhook attempts), apart from the
 * requests' pool: in one pool, a claim of a few dozen due jobs queued ahead of requests
 * for the requests' connections, and the requests' tail grew with it.
 */
const BACKGROUND_CONNECTIONS = 6;
/** PostgresOptions.poolSize, 10 by default. */
const poolSizeOf = (options: PostgresOptions): number => options.poolSize ?? 10;
/** PostgresOptions.connectionTimeoutMs, 5,000 ms by default. */
const connectionTimeoutOf = (options: PostgresOptions): number => options.connectionTimeoutMs ?? 5_000;
/** The gate's lane of a request whose client is not known (yet, or ever: health checks). */
const UNKNOWN_LANE = '(unknown)';
/** The gate's lane of work on the requests' pool outside any request (start-up, clock reads of the replica's own). */
const REPLICA_LANE = '(replica)';
/** How often a unit of work that met a conflict (another replica wrote first) is tried in all. */
const ATTEMPTS = 4;

/** Errors that mean the database cannot be reached or cannot take writes now: a 503, not a 500. */
const UNAVAILABLE_CODES = new Set(['57014', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53100', '53200', '53300', '08000', '08003', '08006', '25006']);
/** Errors that a new attempt of the unit of work resolves: a deadlock, a serialization failure. */
const RETRY_CODES = new Set(['40001', '40P01']);

/** How many distinct statement texts a process prepares; texts beyond (listings' many LIMITs) run unprepared. */
const PREPARED_MAX = 400;
/** A result of `*` that a migration may widen: a prepared plan of it would fail ("cached plan must not change result type"). */
const STAR = /(?:SELECT|RETURNING)\s+(?:\w+\.)?\*|\w\.\*/i;
/** Each statement text's name ('' for one that runs unprepared): one name per text in the process, as pg requires. */
const statementNames = new Map<string, string>();

/**
 * A statement with parameters as a named (prepared) one: each connection parses and plans
 * it once, not at every execution (a create runs a dozen short statements, and parsing
 * and planning was a good part of the server's CPU per statement). Statements whose result
 * is `*` stay unnamed (see STAR), so an older replica keeps working when a newer one adds
 * a column during a rolling upgrade.
 */
export function statement(text: string, values?: unknown[]): string | pg.QueryConfig {
  if (values === undefined) return text;
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= PREPARED_MAX) return { text, values };
    name = STAR.test(text) ? '' : `sandbox_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name === '' ? { text, values } : { name, text, values };
}

const codeOf = (error: unknown): string | undefined => (error as { code?: string } | undefined)?.code;
/**
 * pg-pool's error when every connection of a pool stayed busy for the whole wait, or the
 * request pool's gate's (with pg-pool's message): load, not a failing database.
 */
const isPoolBusy = (error: unknown): boolean => error instanceof PermitTimeout || (error as Error)?.message === 'timeout exceeded when trying to connect';
const isUnavailable = (error: unknown): boolean =>
  UNAVAILABLE_CODES.has(codeOf(error) ?? '') ||
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/i.test((error as Error)?.message ?? '');

/**
 * A failure of a write held back: one that meets a record another unit
 * wrote first (a taken key, a taken batch id: see PgOrders) or changed first
 * (ONE_ROW_OR_STALE) is a Conflict, and the unit is tried again, as when it ran on its own.
 */
function heldFailure(error: unknown): unknown {
  const taken = codeOf(error) === '23505' || (codeOf(error) === '23502' && (error as { column?: string }).column === 'batch_id');
  if (taken) return new Conflict(`A record this unit of work writes exists already: ${(error as Error).message}`);
  if (codeOf(error) === STALE_VERSION) return new Conflict('A record this unit of work changes was changed by another meanwhile.');
  return error;
}

/** Each client's earliest due time among scheduled jobs. */
function earliestPerClient(jobs: Array<[number, string]>): Map<string, number> {
  const earliest = new Map<string, number>();
  for (const [dueAt, clientId] of jobs) earliest.set(clientId, Math.min(dueAt, earliest.get(clientId) ?? Infinity));
  return earliest;
}

interface TxContext {
  client: pg.PoolClient;
  repos: Repositories;
  /** Jobs the transaction scheduled (due time, client): told to listeners once it commits. */
  scheduled: Array<[number, string]>;
  /** Whether BEGIN was sent: it goes with the unit's first statement. */
  begun: boolean;
  /** Writes whose outcome no one waits for: sent with the next statement or the COMMIT. */
  later: Array<{ text: string; values: unknown[] }>;
  /** Batch ids of the orders the unit wrote. */
  batches: Set<string>;
}

/**
 * The PostgreSQL adapter of the storage port: every record in the database, nothing per
 * order in memory, so several replicas share one sandbox. A unit of work is a database
 * transaction on one pooled connection; writes check versions (`WHERE version = $n`),
 * so a replica that read a record before another changed it gets a Conflict, and the
 * whole unit is tried again with fresh reads (up to four times in all) before the
 * Conflict reaches the caller. Scheduled jobs are announced on `LISTEN/NOTIFY`, so
 * every replica's scheduler wakes for a job that falls due earlier than it waits for.
 *
 * Counters (order numbers, batch ids, AWBs, delivery sequences) work as sequences do:
 * values are taken in a statement of their own on a small pool of its own, committed
 * at once, also inside a unit of work (order numbers, batch ids and AWBs in blocks: see
 * PgCounters). A counter row locked until the unit commits would put every create of
 * every replica in one queue (measured: 20 ms waits at 10 connections); the price is
 * that a unit that fails leaves a gap, never a repeat.
 */
export class PostgresStorage implements Storage {
  readonly orders: OrderRepository;
  readonly deliveries: DeliveryRepository;
  readonly settings: ClientSettingsRepository;
  readonly counters: PgCounters;
  readonly meta: MetaRepository;
  readonly jobs: JobRepository;
  readonly requests: PgRequestLog;
  readonly reports: ReportRepository;
  readonly sharedClocks: PgClocks;
  /** A claim finds the clients through the jobs_by_client index, whatever `until` is (see PgJobs.claim). */
  readonly claimsPerClient = true;
  readonly durable = true;
  private readonly current = new AsyncLocalStorage<TxContext>();
  /** Set while background work runs (see `background`). */
  private readonly lane = new AsyncLocalStorage<true>();
  /** Background work's connections (see BACKGROUND_CONNECTIONS). */
  private readonly backgroundPool: pg.Pool;
  /**
   * The request being served (see `requestScope`): `armed` until its first clock read of
   * one client, which reads that client's settings too; `settings` until its handler
   * starts or it ends, whichever is first; `lane` once its client is known.
   */
  private readonly request = new AsyncLocalStorage<{ armed: boolean; settings: Prefetched | undefined; lane: string | undefined }>();
  /**
   * A request's clock read and its settings read (the fault rules, before the handler)
   * were two round trips of every request; in its scope they are one statement.
   */
  readonly requestScope: RequestScope = {
    run: (fn) => this.request.run({ armed: true, settings: undefined, lane: undefined }, fn),
    endPreRead: () => {
      const scope = this.request.getStore();
      if (!scope) return;
      scope.armed = false;
      scope.settings = undefined;
    },
    client: (lane) => {
      const scope = this.request.getStore();
      if (scope) scope.lane = lane;
    },
  };
  /** The settings the current request read along with its clock, if any. */
  private readonly prefetched = (): Prefetched | undefined => this.request.getStore()?.settings;
  private readonly listeners: Array<(dueAt: number, clientId: string) => void> = [];
  private failure: { error: string; since: number } | undefined;
  /** When the database last answered a statement of this replica (performance.now()). */
  private answeredAt = -Infinity;
  /** Waits for a connection that timed out with the replica busy (see translate), since start. */
  private busyWaits = 0;
  private get connectionTimeoutMs(): number {
    return connectionTimeoutOf(this.options);
  }
  private listener: pg.Client | undefined;
  private closed = false;
  /** Jobs scheduled since the last NOTIFY: each client's earliest due time. */
  private readonly unannounced = new Map<string, number>();
  private noticeTimer: NodeJS.Timeout | undefined;
  /** Counters' own connections: a unit holding a connection of `pool` never waits for another of it. */
  private readonly counterPool: pg.Pool;
  /**
   * The request journal's and the readiness reports' connections: written after the
   * answer, committed without waiting for the WAL flush (a database crash may lose the
   * last moments of them, never an order or a delivery), and apart from the pool of the
   * requests' own work, so their queue never holds a create up.
   */
  private readonly observationPool: pg.Pool;
  /**
   * Permits to the connections of `pool` (one each), handed out in turns between clients:
   * pg-pool hands its connections to waiters first come first served, so a client's create
   * sent while sixty of another client's waited was answered 54th to 59th of 61
   * (test/isolation/turns.test.ts), whatever turns FairTurns had given it. A request
   * waits in its client's lane (see `requestScope`), one whose client is not known in
   * UNKNOWN_LANE, other work on `pool` in REPLICA_LANE.
   */
  private readonly gate: FairGate;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresOptions,
  ) {
    this.gate = new FairGate(poolSizeOf(options));
    const db = (): Db => {
      const tx = this.current.getStore();
      return tx ? this.txDb(tx) : this.poolDb;
    };
    this.orders = new PgOrders(db);
    this.deliveries = new PgDeliveries(db);
    this.settings = new PgSettings(db, this.prefetched);
    // A counter's commit need not wait for its WAL flush: a record that uses the number
    // commits synchronously later, which flushes the WAL up to it, the counter's change
    // included. So a number in a kept record is never handed out again, and the counter
    // row is locked for microseconds, not a flush (every create takes two of them).
    this.backgroundPool = new pg.Pool({ connectionString: options.url, max: BACKGROUND_CONNECTIONS, pipeline: true, connectionTimeoutMillis: this.connectionTimeoutMs, query_timeout: 15_000, statement_timeout: 10_000 });
    this.backgroundPool.on('error', (error) => options.onError?.(error));
    this.counterPool = new pg.Pool({ connectionString: options.url, max: 2, connectionTimeoutMillis: this.connectionTimeoutMs, query_timeout: 15_000, statement_timeout: 10_000, options: '-c synchronous_commit=off' });
    this.counterPool.on('error', (error) => options.onError?.(error));
    this.counters = new PgCounters(() => this.counterDb);
    this.observationPool = new pg.Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: this.connectionTimeoutMs, query_timeout: 15_000, statement_timeout: 10_000, options: '-c synchronous_commit=off' });
    this.observationPool.on('error', (error) => options.onError?.(error));
    const observationDb: Db = {
      query: <R>(text: string, values?: unknown[]) => this.run(() => this.observationPool.query(statement(text, values)) as unknown as Promise<{ rows: R[]; rowCount: number | null }>),
      scheduled: () => undefined,
    };
    this.meta = new PgMeta(db);
    this.jobs = new PgJobs(db);
    this.requests = new PgRequestLog(() => observationDb, options.requestLogSize);
    this.reports = new PgReports(() => observationDb, options.requestLogSize);
    this.sharedClocks = new PgClocks(this.poolDb, options.url, `replica_${process.pid}_${randomBytes(4).toString('hex')}`, (error) => this.translate(error), () => {
      const scope = this.request.getStore();
      if (!scope?.armed) return undefined;
      scope.armed = false;
      return (scope.settings = new Map());
    });
  }

  /** Connects, migrates the schema (under an advisory lock) and starts listening for jobs scheduled by other replicas. */
  static async open(options: PostgresOptions): Promise<PostgresStorage> {
    const timeout = options.connectionTimeoutMs;
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) throw new RangeError(`connectionTimeoutMs must be a positive number of milliseconds, not ${timeout}.`);
    // Bounded waits: a database that hangs (not merely refuses) answers 503 after seconds,
    // never holds a request for good.
    const pool = new pg.Pool({
      connectionString: options.url,
      max: poolSizeOf(options),
      // A unit of work sends its held-back writes ahead of the statement it waits for (see inOneTrip).
      pipeline: true,
      connectionTimeoutMillis: connectionTimeoutOf(options),
      query_timeout: 15_000,
      statement_timeout: 10_000,
    });
    // An idle connection that the server drops must not crash the process: the next query reconnects.
    pool.on('error', (error) => options.onError?.(error));
    try {
      await migrate(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    const storage = new PostgresStorage(pool, options);
    await storage.listen();
    return storage;
  }

  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    if (joined) return fn(joined.repos);
    return this.runUnit(fn);
  }

  background<T>(fn: () => Promise<T>): Promise<T> {
    return this.lane.run(true, fn);
  }

  /** The pool of the work running now: background work's own, or the requests'. */
  private get ownPool(): pg.Pool {
    return this.lane.getStore() ? this.backgroundPool : this.pool;
  }

  /** The gate's lane of the work running now on `pool` (see `gate`). */
  private get gateLane(): string {
    const scope = this.request.getStore();
    return scope ? (scope.lane ?? UNKNOWN_LANE) : REPLICA_LANE;
  }

  /**
   * A permit of the gate when the work running now takes a connection of `pool` (none
   * for background work, on a pool of its own). The wait in the gate is the wait for a
   * connection, bounded by the same connectionTimeoutMs, and times out with pg-pool's
   * error (see `translate`); with a permit, `pool` has a connection free or room to open one.
   */
  private async permit(): Promise<() => void> {
    if (this.ownPool !== this.pool) return () => undefined;
    return this.gate.acquire(this.gateLane, this.connectionTimeoutMs);
  }

  /**
   * A statement outside a unit of work, on a connection of the work's own pool, committed
   * at once. One sent while a unit of work holds a connection (PgClocks reads through here
   * whatever runs; no unit does so now) does not wait in the gate: it goes to pg-pool,
   * which gives it the next connection given back, ahead of the requests holding none.
   */
  private async pooledQuery(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    const release = this.current.getStore() ? () => undefined : await this.permit();
    try {
      return await this.ownPool.query(statement(text, values));
    } finally {
      release();
    }
  }

  onJobScheduled(listener: (dueAt: number, clientId: string) => void): void {
    this.listeners.push(listener);
  }

  health(): StorageHealth {
    const busy = this.busyWaits > 0 ? { busyWaits: this.busyWaits } : {};
    return this.failure ? { writable: false, error: this.failure.error, since: this.failure.since, ...busy } : { writable: true, ...busy };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // What this replica scheduled last is told before it goes.
    if (this.noticeTimer) {
      clearTimeout(this.noticeTimer);
      this.notifyOthers();
    }
    this.closed = true;
    // Journal appends still on their way are written before the pools end.
    await this.requests.drained();
    await this.listener?.end().catch(() => undefined);
    await this.sharedClocks.close();
    await this.counters.close();
    await this.counterPool.end();
    await this.observationPool.end();
    await this.backgroundPool.end();
    await this.pool.end();
  }

  /** Statements outside a transaction: each on a pooled connection, committed at once. */
  private readonly poolDb: Db = {
    query: <R>(text: string, values?: unknown[]) => this.run(() => this.pooledQuery(text, values) as unknown as Promise<{ rows: R[]; rowCount: number | null }>),
    scheduled: (dueAt, clientId) => this.announce([[dueAt, clientId]]),
  };

  /** Counter statements: committed at once, outside any unit of work (see the class comment). */
  private readonly counterDb: Db = {
    query: <R>(text: string, values?: unknown[]) => this.run(() => this.counterPool.query(statement(text, values)) as unknown as Promise<{ rows: R[]; rowCount: number | null }>),
    scheduled: () => undefined,
  };

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

  /**
   * A statement of a unit of work. Round trips are what a create spends most on (on both
   * sides, each is a write to the socket and a wake-up of the other process): BEGIN goes
   * with the unit's first statement, and writes whose outcome no one waits for (a new
   * order, a job) go with the next statement or with the COMMIT. A create is then three
   * round trips, not six. They go pipelined (pg's `pipeline` mode), each a prepared
   * statement of its own in one write to the socket: one round trip, and the server
   * parses and plans none of them again (as one multi-statement text, it parsed and
   * planned every one of them at every unit).
   */
  private async inUnit<R>(tx: TxContext, text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }> {
    const result = await this.inOneTrip(tx, text, values);
    this.answered();
    return result as unknown as { rows: R[]; rowCount: number | null };
  }

  /** Sends BEGIN if not sent yet, the writes held back, and `last`, in one write to the socket; its answer once all are answered. */
  private async inOneTrip(tx: TxContext, last: string, values?: unknown[]): Promise<pg.QueryResult> {
    const held = tx.later;
    if (tx.begun && held.length === 0) return tx.client.query(statement(last, values));
    const stream = (tx.client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
    const sent: Array<Promise<unknown>> = [];
    let answer: Promise<pg.QueryResult>;
    stream.cork();
    try {
      if (!tx.begun) sent.push(tx.client.query('BEGIN'));
      for (const write of held) sent.push(tx.client.query(statement(write.text, write.values)));
      answer = tx.client.query(statement(last, values));
    } finally {
      tx.begun = true;
      tx.later = [];
      stream.uncork();
    }
    // The pipeline answers in order: once `answer` is, every statement before it is. A
    // statement after a failed one fails too ("current transaction is aborted"), and a
    // COMMIT after one is a ROLLBACK: the first failure is the unit's.
    const outcomes = await Promise.allSettled([...sent, answer]);
    const first = outcomes.findIndex((outcome) => outcome.status === 'rejected');
    if (first >= 0) {
      const reason = (outcomes[first] as PromiseRejectedResult).reason;
      throw first >= sent.length - held.length && first < sent.length ? heldFailure(reason) : reason;
    }
    return (outcomes.at(-1) as PromiseFulfilledResult<pg.QueryResult>).value;
  }

  /** A unit of work with a permit of the gate, held through its attempts: a unit tried again does not wait its turn again. */
  private async runUnit<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    const release = await this.run(() => this.permit(), false);
    try {
      return await this.attempts(fn);
    } finally {
      release();
    }
  }

  private async attempts<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      // Not an answer of the database: the pool may hand out a connection it already had.
      const client = await this.run(() => this.ownPool.connect(), false);
      const context: TxContext = { scheduled: [], client, begun: false, later: [], batches: new Set(), repos: undefined as unknown as Repositories };
      const db = (): Db => this.txDb(context);
      context.repos = {
        orders: new PgOrders(db),
        deliveries: new PgDeliveries(db),
        settings: new PgSettings(db, this.prefetched),
        counters: this.counters,
        meta: new PgMeta(db),
        jobs: new PgJobs(db),
        requests: this.requests,
        reports: this.reports,
      };
      let broken = false;
      try {
        const result = await this.current.run(context, () => fn(context.repos));
        // A unit that wrote nothing (or only took numbers) has nothing to commit.
        if (context.begun || context.later.length > 0) {
          // A transaction that a failed statement aborted answers COMMIT with ROLLBACK.
          const committed = await this.inOneTrip(context, 'COMMIT');
          if (committed.command !== 'COMMIT') throw new Error(`The unit of work was rolled back at COMMIT (${committed.command}).`);
          this.answered();
        }
        this.announce(context.scheduled);
        return result;
      } catch (error) {
        if (context.begun) await client.query('ROLLBACK').catch(() => void (broken = true));
        const retry = attempt < ATTEMPTS && (error instanceof Conflict || RETRY_CODES.has(codeOf(error) ?? ''));
        if (retry) continue;
        throw this.translate(error);
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * Runs a database call, turning "cannot reach the database" into Unavailable (a 503
   * with Retry-After). `answered`: the call's success is the database answering.
   */
  private async run<R>(call: () => Promise<R>, answered = true): Promise<R> {
    try {
      const result = await call();
      if (answered) this.answered();
      return result;
    } catch (error) {
      throw this.translate(error);
    }
  }

  /** The database answered a statement: it is reachable. */
  private answered(): void {
    this.failure = undefined;
    this.answeredAt = performance.now();
  }

  private translate(error: unknown): unknown {
    if (error instanceof Unavailable || !isUnavailable(error)) return error;
    // Every connection of a pool stayed busy for the whole wait. The replica is busy, not
    // the database failing, when the database answered a statement of this replica during
    // the wait: a 503 to retry, but health says nothing of it. Otherwise (a pool full of
    // connections that hang or are still connecting) it is an outage like any other.
    if (isPoolBusy(error) && performance.now() - this.answeredAt < this.connectionTimeoutMs) {
      this.busyWaits += 1;
      return new Unavailable(domainMessages.storeBusy(this.connectionTimeoutMs));
    }
    const code = codeOf(error) ?? 'ECONNECTION';
    this.failure ??= { error: code, since: Date.now() };
    return new Unavailable(domainMessages.storeUnavailable(`the database: ${code}`));
  }

  /**
   * Tells this replica's listeners of scheduled jobs at once, and the other replicas
   * within NOTICE_MS in one NOTIFY for every job scheduled meanwhile (each client's
   * earliest due time). A NOTIFY takes a lock that every committing NOTIFY of the
   * database waits for: one per create would put all creates of all replicas in one queue.
   */
  /**
   * Tells the listeners (the scheduler) and, shortly, the other replicas of jobs just
   * scheduled. Outside the request scope: the timers the scheduler arms here would carry
   * the request's lane, and its wake-ups (clock reads, the next due time) would wait in
   * that client's turns at the gate, behind a flooding client's backlog.
   */
  private announce(jobs: Array<[number, string]>): void {
    if (jobs.length === 0) return;
    if (this.request.getStore() !== undefined) {
      this.request.exit(() => this.announce(jobs));
      return;
    }
    for (const [clientId, dueAt] of earliestPerClient(jobs)) {
      for (const listener of this.listeners) listener(dueAt, clientId);
      this.unannounced.set(clientId, Math.min(dueAt, this.unannounced.get(clientId) ?? Infinity));
    }
    this.noticeTimer ??= setTimeout(() => this.notifyOthers(), NOTICE_MS).unref();
  }

  private notifyOthers(): void {
    this.noticeTimer = undefined;
    const payload = JSON.stringify([...this.unannounced]);
    this.unannounced.clear();
    // NOTIFY payloads are limited to 8000 bytes; past that the others learn it at their next wake-up.
    if (!this.closed && payload.length < 7_900) {
      void this.gate.run(REPLICA_LANE, this.connectionTimeoutMs, () => this.pool.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, payload])).catch(() => undefined);
    }
  }

  /** Listens again after a drop, trying with a growing wait (up to 30 s) until the database answers; meanwhile each replica's 5 s look for due jobs goes on. */
  private listenAgain(waitMs: number): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed || this.listener) return;
      this.listen().catch(() => this.listenAgain(Math.min(waitMs * 2, 30_000)));
    }, waitMs).unref();
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url });
    client.on('error', (error) => {
      this.options.onError?.(error);
      if (this.listener === client) this.listener = undefined;
      this.listenAgain(1_000);
    });
    client.on('notification', (message) => {
      if (message.channel === CLOCKS_CHANNEL) return this.sharedClocks.notified(message.payload);
      let jobs: unknown;
      try {
        jobs = JSON.parse(message.payload ?? '[]');
      } catch {
        return;
      }
      if (!Array.isArray(jobs)) return;
      for (const entry of jobs) {
        const [clientId, dueAt] = entry as [unknown, unknown];
        if (typeof clientId === 'string' && typeof dueAt === 'number') for (const listener of this.listeners) listener(dueAt, clientId);
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}; LISTEN ${CLOCKS_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners('error');
      await client.end().catch(() => undefined);
      throw error;
    }
    this.listener = client;
  }
}
