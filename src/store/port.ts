import type { ClaimedJob, ClaimOptions, ClientClock, ClientSettings, DeliveryQuery, DueFilter, Job, JobKind, KeptClocks, KeptRealClock, Meta, OrderQuery, Page, RequestFilter, Stored, Unversioned, Delivery, DeliveryStatus, JournalEntry, Order, ReportChange, ReportRun, ReportView } from '../records/index.js';

/**
 * The storage port: everything the sandbox keeps, as typed repositories and one unit of
 * work. The domain speaks only to this; the embedded JSON-file store (`store/embedded/`)
 * and PostgreSQL (`store/postgres/`) are its adapters, and the contract suite
 * (`test/store/contract.ts`) is what every adapter passes. Its records are in `records/`.
 *
 * Records go in and come out as values: frozen, carrying the `version` they were read at.
 * Writing a record whose version is no longer the stored one is a `Conflict`, never a
 * silent overwrite.
 */

export interface OrderRepository {
  /** The order of this number; with `clientId`, only that client's: another's is never read, so a partner learns nothing of it, not even by timing. */
  get(orderNo: string, clientId?: string): Promise<Stored<Order> | undefined>;
  /** The orders of these numbers that exist, in no particular order (a removal's slice); in a unit of work, held until it ends. */
  getMany(orderNos: readonly string[]): Promise<Array<Stored<Order>>>;
  /** The order of this AWB; with `clientId`, only if it is that client's (as `get`). */
  byAwb(awb: string, clientId?: string): Promise<Stored<Order> | undefined>;
  batchExists(batchId: string): Promise<boolean>;
  /**
   * Set when, in a unit of work, `insert` itself refuses an order whose number is taken or
   * whose batch id another unit's order has, and `update` one whose AWB another order has
   * (a `Conflict`, so the unit is tried again with fresh numbers): numbers are then drawn
   * without a look-up first (see `IdFactory`).
   */
  readonly refusesTakenIds?: boolean;
  /** Adds a new order; a `Conflict` if its number is taken. */
  insert(order: Unversioned<Order>): Promise<Stored<Order>>;
  /** Writes a changed order read at `order.version`; a `Conflict` if it changed since. */
  update(order: Stored<Order>): Promise<Stored<Order>>;
  /** Removes an order read at `order.version`; a `Conflict` if it changed since. */
  remove(order: Stored<Order>): Promise<void>;
  /** The client's orders, newest first, one page at a time. */
  list(clientId: string, query: OrderQuery): Promise<Page<Stored<Order>>>;
  /** Up to `limit` orders (any client's, or the client's given) created before `olderThan`, oldest first (retention). */
  createdBefore(olderThan: number, limit: number, clientId?: string): Promise<Array<Stored<Order>>>;
  count(clientId?: string): Promise<number>;
}

export interface DeliveryRepository {
  get(id: string): Promise<Stored<Delivery> | undefined>;
  /** The deliveries of these ids that exist, in no particular order: one read for many (a removal's page). */
  getMany(ids: readonly string[]): Promise<Array<Stored<Delivery>>>;
  /** Up to `limit` of the client's deliveries of these orders, in no particular order (the orders' removal). */
  ofOrders(clientId: string, orderNos: readonly string[], limit: number): Promise<Array<Stored<Delivery>>>;
  insert(delivery: Unversioned<Delivery>): Promise<Stored<Delivery>>;
  /** Writes a changed delivery read at `delivery.version`; a `Conflict` if it changed since (a reset removed it, say). */
  update(delivery: Stored<Delivery>): Promise<Stored<Delivery>>;
  /** Removes the delivery whatever its version: a reset or a retention sweep wins over an attempt in flight, which then records nothing. */
  remove(delivery: Stored<Delivery>): Promise<void>;
  /** The client's deliveries, newest first. */
  list(clientId: string, query: DeliveryQuery): Promise<Page<Stored<Delivery>>>;
  /** How many of the client's deliveries have this status; counting stops at `upTo` (the answer is then `upTo`). */
  countByStatus(clientId: string, status: DeliveryStatus, upTo?: number): Promise<number>;
  /**
   * Stores that can tell them apart may offer it: of what `countByStatus` counts in this
   * unit of work, how many are the unit's own writes, not committed yet (0 or more).
   */
  ownByStatus?(clientId: string, status: DeliveryStatus): number;
  /**
   * Up to `limit` settled deliveries (delivered or failed) created before `olderThan`
   * (retention); of the client given, the oldest in the order they were made, up to the
   * first made at `olderThan` or later.
   */
  settledBefore(olderThan: number, limit: number, clientId?: string): Promise<Array<Stored<Delivery>>>;
}

export interface ClientSettingsRepository {
  get(clientId: string): Promise<Stored<ClientSettings> | undefined>;
  /** Inserts (version absent) or updates (version checked) the client's settings. */
  put(settings: ClientSettings | Stored<ClientSettings>): Promise<Stored<ClientSettings>>;
}

/**
 * Sequences that never repeat, across restarts. `next`: 1, 2, 3, ... (a value taken in a
 * unit that fails is given again by the embedded store, skipped by PostgreSQL). `rank`: a
 * number ranking what it is given to by when it was taken (a listing's order): the
 * counter's next value on the embedded store, the database's clock on PostgreSQL.
 */
export interface CounterRepository {
  next(name: string): Promise<number>;
  rank(name: string): Promise<number>;
}

export interface MetaRepository {
  get<K extends keyof Meta>(key: K): Promise<Meta[K] | undefined>;
  set<K extends keyof Meta>(key: K, value: Meta[K]): Promise<void>;
  /**
   * Keeps `value` unless the key has one already, and answers the value kept: of replicas
   * that start at once, all end up with the first one's value.
   */
  setIfAbsent<K extends keyof Meta>(key: K, value: Meta[K]): Promise<Meta[K]>;
}

/** The request journal: each client's most recent provider requests, bounded. */
export interface RequestLogRepository {
  /** Most entries kept per client; the oldest are dropped beyond it. */
  readonly size: number;
  append(clientId: string, entry: JournalEntry): Promise<void>;
  /** The client's entries, oldest first. */
  list(clientId: string, filter: RequestFilter): Promise<JournalEntry[]>;
  clear(clientId: string): Promise<number>;
  /** Removes the entries (any client's, or the client's given) made before `olderThan` (retention). */
  prune(olderThan: number, clientId?: string): Promise<number>;
}

/**
 * Each client's readiness report (counts per catalogue item, marks, checks, a bounded
 * event log). Like the journal it is written on every request, so each call is a step
 * of its own, not part of a unit of work.
 */
export interface ReportRepository {
  /** Most events kept per client; the counts are kept whatever the log drops. */
  readonly size: number;
  /**
   * The client's report, read-only (see `ReportView`: it may be a live view, so copy
   * what must outlast the next change); an empty one when nothing was kept for it.
   * `events: false` may leave the event log out, `counts: false` the counts (judging a
   * request needs only the marks); a store may give them all the same.
   */
  get(clientId: string, options?: { events?: boolean; counts?: boolean }): Promise<ReportView>;
  /** Applies `change` to the client's report (see `applyReportChange`); the change's objects become the report's. */
  change(clientId: string, change: ReportChange): Promise<void>;
  /** Empties the client's report and starts `run` (null: no named run). */
  start(clientId: string, run: ReportRun | null): Promise<void>;
  /** Removes the client's report (reset); 1 when there was one. */
  clear(clientId: string): Promise<number>;
}

/** A claim's share per client as both stores take it: a whole number of jobs (0 or more), or Infinity for none given. */
export const shareOf = (perClient: number | undefined): number =>
  perClient === undefined || perClient === Infinity ? Infinity : Number.isNaN(perClient) ? 0 : Math.max(0, Math.floor(perClient));

export interface JobRepository {
  /**
   * Stores that other processes share (PostgreSQL replicas) only: the earliest due time
   * of a job of the client due by `until` that a worker other than `owner` holds under a
   * live lease (an advance waits for it), or undefined when there is none.
   */
  heldElsewhere?(clientId: string, until: number, owner: string): Promise<number | undefined>;
  /** Schedules (or moves) the job of this kind and key; an existing claim on it lapses. */
  schedule(job: Job): Promise<void>;
  cancel(kind: JobKind, key: string): Promise<void>;
  get(kind: JobKind, key: string): Promise<Stored<Job> | undefined>;
  /** Claims up to `limit` unclaimed (or lease-expired) jobs due by `until`, earliest first, within the filters of `options`. */
  claim(options: ClaimOptions): Promise<ClaimedJob[]>;
  /** Removes a claimed job that ran, unless it was rescheduled since it was claimed. */
  complete(job: ClaimedJob): Promise<void>;
  /** Gives a claimed job back, due as it was (a worker that stops). */
  release(job: ClaimedJob): Promise<void>;
  /** The earliest due time of an unclaimed job (of one client, or of all; of some kinds, or of all), shifted by `ahead`. */
  nextDue(filter?: DueFilter): Promise<number | undefined>;
  count(clientId?: string): Promise<number>;
  removeByClient(clientId: string): Promise<number>;
}

/**
 * The clocks in a store that several processes share (PostgreSQL replicas), which is
 * their authority (DESIGN "Client clocks"): each process runs its clocks from what is
 * kept here, and writes every move here before it is acknowledged. A clock kept here
 * never moves back, whatever order the processes write in.
 */
export interface SharedClockRepository {
  /** The kept clocks of these clients (every client's when omitted), and the sandbox's. */
  read(clientIds?: readonly string[]): Promise<KeptClocks>;
  /**
   * Moves these clients' clocks (and the sandbox's manual one) on, never back: each
   * field keeps the later of what is kept and what is given. Returns what is kept now,
   * and tells every process (`onChange`).
   */
  moveOn(clients: ReadonlyMap<string, ClientClock>, manualMs?: number): Promise<KeptClocks>;
  /** Writes the real clock's state if it is still `expected` (undefined: none kept yet); false when another process changed it first. */
  setReal(state: KeptRealClock, expected: KeptRealClock | undefined): Promise<boolean>;
  /** Runs `fn` holding these clocks ('' is the sandbox's), so advances of one clock run one at a time across processes. */
  exclusive<T>(clientIds: readonly string[], fn: () => Promise<T>): Promise<T>;
  /** Told which clocks another process changed ('' is the sandbox's; none named: any may have). */
  onChange(listener: (clientIds: readonly string[]) => void): void;
}

/** See `Storage.requestScope`. */
export interface RequestScope {
  /** Runs one request in a scope; `stillWanted` throws once its client has gone (a store asks it before costly work it made wait). */
  run<T>(fn: () => Promise<T>, stillWanted?: () => void): Promise<T>;
  /** Settings read from now on are read afresh (as the handler starts); `ended`: nothing pre-read is used any more (as the request ends). */
  endPreRead(ended?: boolean): void;
  /**
   * Tells the scope whose request it is, once that is known: the client's id, or
   * the admin lane for an admin's request (the lanes of FairTurns). A shared store hands its
   * connections out in turns between them (see FairGate).
   */
  client(lane: string): void;
  /**
   * Tells the scope, before the request's first clock read, that its handler reads the order with
   * this AWB: a shared store may read it with the clock (one round trip), for the handler's read, once.
   */
  readsOrder(awb: string): void;
}

/** Every repository; inside `transaction(fn)`, `fn` gets them bound to that transaction. */
export interface Repositories {
  orders: OrderRepository;
  deliveries: DeliveryRepository;
  settings: ClientSettingsRepository;
  counters: CounterRepository;
  meta: MetaRepository;
  requests: RequestLogRepository;
  jobs: JobRepository;
  reports: ReportRepository;
}

/** Whether the store can take writes. */
export interface StorageHealth {
  writable: boolean;
  /** Why not, while it cannot: an errno code such as `ENOSPC`. */
  error?: string;
  /** Since when it cannot (wall-clock epoch ms). */
  since?: number;
  /**
   * Set while the store takes writes but cannot tidy up behind them (the embedded store's
   * checkpoint failing: the journal holds every change, the data file lags): the error.
   */
  maintenanceError?: string;
  /**
   * PostgreSQL: waits for a database connection that timed out while every connection of
   * this replica's pool stayed busy and the database kept answering (load, not an
   * outage: those requests answered 503), since start. Absent while there were none.
   */
  busyWaits?: number;
}

/**
 * Short messages between the processes that share a store (PostgreSQL replicas): what one
 * publishes on a channel, every one subscribed to it is told, itself included. Payloads
 * are small (under 8000 bytes); delivery is at most once, so a caller waits with a timeout.
 */
export interface Signals {
  publish(channel: string, payload: string): Promise<void>;
  subscribe(channel: string, handler: (payload: string) => void): Promise<void>;
}

/** The port the domain is written against. */
export interface Storage extends Repositories {
  /**
   * Runs `fn` as one unit of work: everything it writes through the repositories it
   * is given is committed together (durably, before this resolves), or nothing is when
   * it throws. Writes through `storage.<repository>` made while a transaction runs in
   * the same async context join that transaction. No I/O other than the repositories
   * belongs inside `fn`.
   */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>;
  /**
   * Called after a commit that scheduled jobs, once per client with the earliest due
   * time it scheduled for that client (on that client's clock), so a waiting scheduler
   * wakes up earlier.
   */
  onJobScheduled(listener: (dueAt: number, clientId: string) => void): void;
  health(): StorageHealth;
  /** Present when other processes share the store: the clocks live here, not in each process. */
  readonly sharedClocks?: SharedClockRepository;
  /**
   * True when a claim with `perClient` reads about as many jobs as it takes, each client's
   * earliest, however far `until` reaches into a backlog (the embedded store's queues per
   * client; PostgreSQL's skip through the clients of an index). The scheduler then claims
   * everything due, so a client's backlog never makes another client's due jobs wait
   * behind it. Without it, a wake-up claims the jobs due within a second of the earliest.
   */
  readonly claimsPerClient?: boolean;
  /**
   * Stores that other processes share (PostgreSQL) may offer it: runs one request in a
   * scope of its own, in which the first read of one client's clock brings along that
   * client's settings in the same round trip, for the first read of them before the
   * request's handler starts (`endPreRead()`). Both are read after the
   * request arrived, so it sees every change acknowledged before, as two reads would.
   * Once the scope is told the request's client (`client()`), the request waits for the
   * store's connections in turns with other clients' requests.
   */
  readonly requestScope?: RequestScope;
  /**
   * Stores that other processes share (PostgreSQL) may offer it: runs `fn` as background
   * work (the scheduler's jobs and webhook attempts), on connections of its own, so a
   * burst of due jobs never makes requests queue for a connection behind it.
   */
  background?<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Stores whose commit is a write of their own (the embedded store's journal line) may
   * offer it: runs `fn` as one unit of work in which each transaction it starts is a part
   * of its own, so a part that throws leaves nothing of itself behind and the parts
   * before and after it stand; they are all committed together when `fn` ends (one
   * journal line), or none of them is, with `Unavailable`, when that commit fails. The
   * scheduler runs a row of due jobs this way.
   */
  inOneUnit?<T>(fn: () => Promise<T>): Promise<T>;
  /** Present when other processes share the store (PostgreSQL): messages between them. The embedded store, one process, has none. */
  readonly signals?: Signals;
  /** True when changes survive a restart (not `:memory:`). */
  readonly durable: boolean;
  close(): Promise<void>;
}
