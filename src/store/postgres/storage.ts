import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { ClientSettingsRepository, DeliveryRepository, JobRepository, MetaRepository, OrderRepository, Repositories, RequestScope, Storage, StorageHealth } from '../port.js';
import { channelListener } from './channel-listener.js';
import type { KeptListen } from './kept-listen.js';
import { PgSignals } from './signals.js';
import { PgClocks } from './clocks.js';
import { Connections } from './connections.js';
import { PgCounters } from './counters.js';
import { PgDeliveries } from './deliveries.js';
import { JobNotices } from './job-notices.js';
import { PgJobs } from './jobs.js';
import { PgMeta } from './meta.js';
import { checkOptions, type PostgresOptions } from './options.js';
import { PgOrders } from './orders.js';
import { requestPool } from './pools.js';
import { Reachability } from './reachability.js';
import { PgReports } from './reports.js';
import { RequestScopes } from './request-scope.js';
import { PgRequestLog } from './requests.js';
import { migrate } from './schema.js';
import { PgSettings } from './settings.js';
import { UnitsOfWork } from './unit-of-work.js';

/**
 * The PostgreSQL adapter of the storage port: every record in the database, nothing per
 * order in memory, so several replicas share one sandbox. A unit of work is a database
 * transaction on one pooled connection, tried again when another replica wrote first
 * (UnitsOfWork). Scheduled jobs are announced on `LISTEN/NOTIFY` (JobNotices), so every
 * replica's scheduler wakes for a job that falls due earlier than it waits for.
 *
 * Counters (order numbers, batch ids, AWBs, delivery sequences) work as sequences do:
 * values are taken in a statement of their own on a small pool of its own, committed
 * at once, also inside a unit of work (order numbers, batch ids and AWBs in blocks: see
 * PgCounters). A counter row locked until the unit commits would put every create of
 * every replica in one queue; the price is that a unit that fails leaves a gap, never a
 * repeat.
 *
 * This class opens and closes the adapter and hands out its parts; `transaction` and
 * `background` are the units' and the connections' own functions, not wrappers of them.
 */
export class PostgresStorage implements Storage {
  readonly orders: OrderRepository;
  readonly deliveries: DeliveryRepository;
  readonly settings: ClientSettingsRepository;
  readonly counters: PgCounters;
  readonly meta: MetaRepository;
  readonly jobs: JobRepository;
  readonly requests: PgRequestLog;
  readonly reports: PgReports;
  readonly sharedClocks: PgClocks;
  /** A claim finds the clients through the jobs_by_client index, whatever `until` is (see PgJobs.claim). */
  readonly claimsPerClient = true;
  readonly durable = true;
  readonly requestScope: RequestScope;
  readonly transaction: <T>(fn: (tx: Repositories) => Promise<T>) => Promise<T>;
  readonly background: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly reach: Reachability;
  private readonly connections: Connections;
  private readonly notices: JobNotices;
  private readonly listener: KeptListen;
  readonly signals: PgSignals;
  private closed = false;

  private constructor(pool: pg.Pool, options: PostgresOptions) {
    const scopes = new RequestScopes();
    this.requestScope = scopes.scope;
    this.reach = new Reachability(options);
    this.connections = new Connections(pool, options, scopes, this.reach);
    this.notices = new JobNotices(this.connections, scopes);
    this.counters = new PgCounters(() => this.connections.counterDb, () => this.connections.quietCounterDb);
    this.requests = new PgRequestLog(() => this.connections.observationDb, options.requestLogSize);
    this.reports = new PgReports(() => this.connections.observationDb, options.requestLogSize);
    const units = new UnitsOfWork(this.connections, this.reach, this.notices, { counters: this.counters, requests: this.requests, reports: this.reports }, scopes.prefetched);
    this.transaction = units.transaction;
    this.background = this.connections.background;
    this.orders = new PgOrders(units.db, scopes.preReadOrder);
    this.deliveries = new PgDeliveries(units.db);
    this.settings = new PgSettings(units.db, scopes.prefetched);
    this.meta = new PgMeta(units.db);
    this.jobs = new PgJobs(units.db);
    const replica = `replica_${process.pid}_${randomBytes(4).toString('hex')}`;
    this.sharedClocks = new PgClocks(units.outside, options.url, replica, (error) => this.reach.translate(error), scopes.arm, scopes.keepOrder);
    this.listener = channelListener(options, this.notices, this.sharedClocks);
    this.signals = new PgSignals(options, (error) => this.reach.translate(error));
  }

  /** Connects, migrates the schema (under an advisory lock) and starts listening for jobs scheduled by other replicas. */
  static async open(options: PostgresOptions): Promise<PostgresStorage> {
    checkOptions(options);
    const pool = requestPool(options);
    try {
      const { from, to } = await migrate(pool, { ...(options.signal ? { signal: options.signal } : {}), ...(options.onMigrationWait ? { waiting: options.onMigrationWait } : {}) });
      if (from < to) options.onMigrated?.(from, to);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    const storage = new PostgresStorage(pool, options);
    try {
      await storage.listener.listen();
    } catch (error) {
      await storage.connections.end().catch(() => undefined);
      throw error;
    }
    storage.reach.watch(storage.connections.probe);
    storage.counters.start();
    return storage;
  }

  onJobScheduled(listener: (dueAt: number, clientId: string) => void): void {
    this.notices.subscribe(listener);
  }

  health(): StorageHealth {
    return this.reach.health();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // What this replica scheduled last is told before it goes.
    this.notices.close();
    this.closed = true;
    this.reach.stop();
    this.listener.stop();
    // Journal entries and report counts still held are written before the pools end.
    await Promise.all([this.requests.drained(), this.reports.drained()]);
    await this.listener.end();
    await this.signals.close();
    await this.sharedClocks.close();
    await this.counters.close();
    await this.connections.end();
  }
}
