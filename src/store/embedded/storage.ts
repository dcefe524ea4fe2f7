import { AsyncLocalStorage } from 'node:async_hooks';
import { domainMessages, Unavailable } from '../../shared/index.js';
import type { Order, Delivery, Job, Stored } from '../../records/index.js';
import type { ClientSettingsRepository, CounterRepository, DeliveryRepository, JobRepository, MetaRepository, OrderRepository, Repositories, Storage, StorageHealth } from '../port.js';
import { LOCK_LOST, JournaledFile, type JournaledFileOptions, DataFileError, StoreUnavailable } from './file/index.js';
import { Indexes } from './indexes.js';
import { DELIVERIES, JOBS, ORDERS } from './collections.js';
import { DeliveryPacker } from './delivery-packer.js';
import { FILE_FORMATS } from './order-file-format.js';
import { OrderPacker } from './order-packer.js';
import { UnpackedOrders } from './unpacked-orders.js';
import { EmbeddedCounters } from './counters-repository.js';
import { EmbeddedDeliveries } from './deliveries-repository.js';
import { EmbeddedJobs } from './jobs-repository.js';
import { EmbeddedMeta } from './meta-repository.js';
import { EmbeddedOrders } from './orders-repository.js';
import { EmbeddedSettings } from './settings-repository.js';
import { MemoryRequestLog } from './request-log.js';
import { MemoryReports } from './reports.js';
import { CommittedAccess, UnitOfWork, type Access } from './unit-of-work.js';

export interface EmbeddedOptions extends JournaledFileOptions {
  /** Most request-journal entries kept per client. */
  requestLogSize: number;
}

/** Method names of each repository that write: outside a transaction each runs as one of its own. */
const WRITES: Record<keyof Omit<Repositories, 'requests' | 'reports'>, string[]> = {
  orders: ['insert', 'update', 'remove'],
  deliveries: ['insert', 'update', 'remove'],
  settings: ['put'],
  counters: ['next', 'rank'],
  meta: ['set', 'setIfAbsent'],
  jobs: ['schedule', 'cancel', 'complete', 'release', 'removeByClient'],
};

/** A transaction joined to a unit made of parts: what it wrote is undone if it throws. */
async function asPart<T>(unit: UnitOfWork, fn: () => Promise<T>): Promise<T> {
  unit.beginPart();
  let result: T;
  try {
    result = await fn();
  } catch (error) {
    unit.endPart(true);
    throw error;
  }
  unit.endPart(false);
  return result;
}

/**
 * The embedded adapter of the storage port: lowdb's model, records in memory made
 * durable by the journaled JSON data file (`JournaledFile`), with indexes in memory for every
 * lookup and listing. Transactions run one at a time; their writes reach the store
 * and its journal together when they commit, and the indexes after that.
 */
export class EmbeddedStorage implements Storage {
  readonly orders: OrderRepository;
  readonly deliveries: DeliveryRepository;
  readonly settings: ClientSettingsRepository;
  readonly counters: CounterRepository;
  readonly meta: MetaRepository;
  readonly jobs: JobRepository;
  readonly requests: MemoryRequestLog;
  readonly reports: MemoryReports;
  private readonly indexes = new Indexes((id) => this.store.get<Job>(JOBS, id));
  private readonly unpacked = new UnpackedOrders();
  private readonly current = new AsyncLocalStorage<Repositories>();
  /** The units made of parts (`inOneUnit`), by the repositories their parts are given. */
  private readonly partsOf = new WeakMap<Repositories, UnitOfWork>();
  private readonly listeners: Array<(dueAt: number, clientId: string) => void> = [];
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly store: JournaledFile, requestLogSize: number) {
    this.requests = new MemoryRequestLog(requestLogSize);
    this.reports = new MemoryReports(requestLogSize);
    const committed = this.repositoriesOver(new CommittedAccess(store));
    this.orders = this.routed('orders', committed.orders);
    this.deliveries = this.routed('deliveries', committed.deliveries);
    this.settings = this.routed('settings', committed.settings);
    this.counters = this.routed('counters', committed.counters);
    this.meta = this.routed('meta', committed.meta);
    this.jobs = this.routed('jobs', committed.jobs);
    for (const order of store.values<Order>(ORDERS)) this.indexes.orders.add(order);
    for (const delivery of store.values<Delivery>(DELIVERIES)) this.indexes.deliveries.add(delivery);
    for (const [id, job] of store.entries<Stored<Job>>(JOBS)) this.indexes.jobs.add(id, job);
    this.indexes.jobs.loaded = store.count(JOBS);
  }

  /** Opens the data file (or nothing, for `:memory:`) and builds the indexes, before the store writes anything. */
  static async open(options: EmbeddedOptions): Promise<EmbeddedStorage> {
    const orders = new OrderPacker();
    const deliveries = new DeliveryPacker();
    const pack = (collection: string, value: unknown, current?: unknown): unknown =>
      collection === ORDERS ? orders.pack(value, current) : collection === DELIVERIES ? deliveries.pack(value) : value;
    let storage: EmbeddedStorage | undefined;
    // The indexes are built before the store writes anything (a migrated file, say): a record they cannot take refuses the start.
    const onLoad = (store: JournaledFile) => {
      try {
        storage = new EmbeddedStorage(store, options.requestLogSize);
      } catch (error) {
        throw new DataFileError(
          `Cannot load the records of the data file ${options.path} (${(error as Error).message}): one was probably edited by hand. ` +
            'It was left as it was: repair it, or move it away to start without it.',
          { cause: error },
        );
      }
    };
    await JournaledFile.open({ ...options, pack, formats: FILE_FORMATS, onLoad });
    return storage!;
  }

  /** Claims take the heads of the due-job queues (one per client and kind), whatever `until` is. */
  readonly claimsPerClient = true;

  get durable(): boolean {
    return this.store.isPersistent;
  }

  /** How many jobs were indexed when the store opened (start-up work is in proportion to it). */
  get jobsLoaded(): number {
    return this.indexes.jobs.loaded;
  }

  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    if (joined) {
      const unit = this.partsOf.get(joined);
      return unit ? asPart(unit, () => fn(joined)) : fn(joined);
    }
    return this.queued(fn, false);
  }

  inOneUnit<T>(fn: () => Promise<T>): Promise<T> {
    if (this.current.getStore()) return fn();
    return this.queued(fn, true);
  }

  private queued<T>(fn: (tx: Repositories) => Promise<T>, parts: boolean): Promise<T> {
    const run = this.queue.then(() => this.runUnit(fn, parts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  onJobScheduled(listener: (dueAt: number, clientId: string) => void): void {
    this.listeners.push(listener);
  }

  /** The store's own health: not writable from a failed journal append until one succeeds (see JournaledFile.health). */
  health(): StorageHealth {
    const store = this.store.health();
    return {
      writable: store.writable,
      ...(store.writable ? {} : { error: store.code ?? 'EUNKNOWN', since: store.since }),
      ...(store.checkpointError !== undefined ? { maintenanceError: store.checkpointError } : {}),
    };
  }

  close(): Promise<void> {
    return this.queue.then(() => this.store.close());
  }

  /** For a start that fails once the store is open: the journaled file's `refuseStart`, after the unit running. */
  refuseStart(error: unknown): Promise<unknown> {
    return this.queue.then(() => this.store.refuseStart(error));
  }

  /** Rewrites the data file now (tests, and the soak). */
  checkpoint(): Promise<void> {
    return this.store.checkpoint();
  }

  private async runUnit<T>(fn: (tx: Repositories) => Promise<T>, parts: boolean): Promise<T> {
    const unit = new UnitOfWork(this.store);
    const repos = this.repositoriesOver(unit);
    if (parts) this.partsOf.set(repos, unit);
    const result = await this.current.run(repos, () => fn(repos));
    if (unit.empty) return result;
    let changes;
    try {
      changes = unit.commit();
    } catch (error) {
      // The store rolled the unit back; the indexes never saw it.
      if (error instanceof StoreUnavailable) throw new Unavailable(error.code === LOCK_LOST ? domainMessages.lockLost : domainMessages.storeUnavailable(error.code));
      throw error;
    }
    const earliest = this.indexes.apply(changes);
    for (const [clientId, dueAt] of earliest) for (const listener of this.listeners) listener(dueAt, clientId);
    return result;
  }

  private repositoriesOver(access: Access): Repositories {
    return {
      orders: new EmbeddedOrders(access, this.indexes, this.unpacked),
      deliveries: new EmbeddedDeliveries(access, this.indexes),
      settings: new EmbeddedSettings(access),
      counters: new EmbeddedCounters(access),
      meta: new EmbeddedMeta(access),
      jobs: new EmbeddedJobs(access, this.indexes),
      requests: this.requests,
      reports: this.reports,
    };
  }

  /**
   * A repository for use outside a transaction: reads see what is committed (or the
   * running transaction's writes, in its async context); each write joins the running
   * transaction or runs as a transaction of its own.
   */
  private routed<K extends keyof typeof WRITES>(name: K, committed: Repositories[K]): Repositories[K] {
    const writes = new Set(WRITES[name]);
    const routed: Record<string, unknown> = {};
    const proto = Object.getPrototypeOf(committed) as object;
    for (const method of Object.getOwnPropertyNames(proto)) {
      if (method === 'constructor') continue;
      routed[method] = (...args: unknown[]) => {
        const tx = this.current.getStore();
        const target = (tx ? tx[name] : committed) as unknown as Record<string, (...a: unknown[]) => unknown>;
        if (tx || !writes.has(method)) return target[method]!(...args);
        return this.transaction((inner) => (inner[name] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args));
      };
    }
    return routed as unknown as Repositories[K];
  }
}
