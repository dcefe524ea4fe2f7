import { Conflict } from '../../shared/index.js';
import type { Order } from '../../records/index.js';
import type { Delivery, DeliveryStatus } from '../../records/index.js';
import type {
  ClaimedJob,
  ClaimOptions,
  ClientSettings,
  ClientSettingsRepository,
  CounterRepository,
  DeliveryQuery,
  DeliveryRepository,
  DueFilter,
  Job,
  JobKind,
  JobRepository,
  Meta,
  MetaRepository,
  OrderQuery,
  OrderRepository,
  Page,
  Stored,
  Unversioned,
} from '../port.js';
import { shareOf } from '../port.js';
import type { Indexes, JobQueue } from './indexes.js';
import { CLIENTS, COUNTERS, DELIVERIES, JOBS, META, ORDERS, jobId, stored, type PackedOrder, type UnpackedOrders } from './records.js';
import { copyWith } from './file/index.js';
import { SortedKeys } from './sorted-keys.js';
import { encodeCursor, positionOf } from '../cursor.js';
import { checkVersion, type Access } from './unit-of-work.js';

/** A client's clock lead (0 when not named). */
const leadOf =
  (ahead: ClaimOptions['ahead']) =>
  (clientId: string): number =>
    ahead?.get(clientId) ?? 0;

/** Inserts a record that must not exist yet. */
function insertNew<T>(access: Access, collection: string, key: string, value: Unversioned<T>, what: string): Stored<T> {
  if (access.get(collection, key) !== undefined) throw new Conflict(`${what} already exists.`);
  const record = copyWith(value, { version: 1 });
  access.put(collection, key, record);
  return stored(record as T)!;
}

/** Writes a record read earlier at its version. */
function updateAt<T>(access: Access, collection: string, key: string, value: Stored<T>, what: string): Stored<T> {
  checkVersion(access, collection, key, value.version, what);
  const record = copyWith(value, { version: value.version + 1 });
  access.put(collection, key, record);
  return stored(record as T)!;
}

interface Listing<T, R = Stored<T>> {
  keys: SortedKeys | undefined;
  cursor: string | undefined;
  limit: number;
  /** False when the query has no filter: then the total is the number of keys and the scan stops at the page. */
  filtered: boolean;
  /** The record as kept, enough to filter it and place it. */
  load(id: string): R | undefined;
  keep(record: R): boolean;
  positionOf(record: R): { rank: number; id: string };
  /** The record as the port gives it, for those on the page only. */
  open(record: R): Stored<T>;
}

/** A page of a client's listing: records newest first after the cursor that pass `keep`; `total` counts every match. */
function pageOf<T, R>(listing: Listing<T, R>): Page<Stored<T>> {
  const { keys, limit } = listing;
  const from = positionOf(listing.cursor);
  const items: R[] = [];
  let more = false;
  for (const key of keys?.newestFirst(from) ?? []) {
    const record = listing.load(key);
    if (!record || !listing.keep(record)) continue;
    if (items.length === limit) {
      more = true;
      break;
    }
    items.push(record);
  }
  let total = keys?.size ?? 0;
  if (listing.filtered) {
    total = 0;
    for (const key of keys?.newestFirst() ?? []) {
      const record = listing.load(key);
      if (record && listing.keep(record)) total += 1;
    }
  }
  const last = items[items.length - 1];
  return { items: items.map((record) => listing.open(record)), next_cursor: more && last ? encodeCursor(listing.positionOf(last)) : null, total };
}

/**
 * Orders as the port gives them. The store keeps them packed (see OrderPacker): they are
 * unpacked on the way out, through `unpacked`, which hands out the same object for a record
 * read again lately.
 */
export class EmbeddedOrders implements OrderRepository {
  constructor(
    private readonly access: Access,
    private readonly indexes: Indexes,
    private readonly unpacked: UnpackedOrders,
  ) {}

  async get(orderNo: string): Promise<Stored<Order> | undefined> {
    return this.unpacked.of(this.access.get(ORDERS, orderNo));
  }

  async byAwb(awb: string): Promise<Stored<Order> | undefined> {
    const orderNo = this.indexes.orders.byAwb.get(awb);
    return orderNo === undefined ? undefined : this.get(orderNo);
  }

  async batchExists(batchId: string): Promise<boolean> {
    return this.indexes.orders.batches.has(batchId);
  }

  async insert(order: Unversioned<Order>): Promise<Stored<Order>> {
    return insertNew<Order>(this.access, ORDERS, order.order_no, order, `Order ${order.order_no}`);
  }

  async update(order: Stored<Order>): Promise<Stored<Order>> {
    return updateAt(this.access, ORDERS, order.order_no, order, `Order ${order.order_no}`);
  }

  async remove(order: Stored<Order>): Promise<void> {
    checkVersion(this.access, ORDERS, order.order_no, order.version, `Order ${order.order_no}`);
    this.access.remove(ORDERS, order.order_no);
  }

  async list(clientId: string, query: OrderQuery): Promise<Page<Stored<Order>>> {
    // Filters read the packed record: a filtered total looks at every order of the client.
    const keep = (o: PackedOrder): boolean =>
      o.client_id === clientId &&
      (query.status === undefined || o.status === query.status) &&
      (query.scenario === undefined || o.scenario === query.scenario) &&
      (query.courier_code === undefined || o.courier_code === query.courier_code) &&
      (query.search === undefined || o.order_no === query.search || o.awb === query.search || o.item.order_code === query.search);
    return pageOf<Order, PackedOrder>({
      keys: this.indexes.orders.byClient.get(clientId),
      cursor: query.cursor,
      limit: query.limit,
      filtered: query.status !== undefined || query.scenario !== undefined || query.courier_code !== undefined || query.search !== undefined,
      load: (orderNo) => this.access.get<PackedOrder>(ORDERS, orderNo),
      keep,
      positionOf: (o) => ({ rank: o.created_at, id: o.order_no }),
      open: (o) => this.unpacked.of(o)!,
    });
  }

  async createdBefore(olderThan: number, limit: number): Promise<Array<Stored<Order>>> {
    const found: Array<Stored<Order>> = [];
    for (const orderNo of this.indexes.orders.byAge.oldestFirst()) {
      const order = this.access.get<PackedOrder>(ORDERS, orderNo);
      if (!order) continue;
      if (order.created_at >= olderThan || found.length >= limit) break;
      found.push(this.unpacked.of(order)!);
    }
    return found;
  }

  async count(clientId?: string): Promise<number> {
    return clientId === undefined ? this.indexes.orders.byAge.size : (this.indexes.orders.byClient.get(clientId)?.size ?? 0);
  }
}

export class EmbeddedDeliveries implements DeliveryRepository {
  constructor(
    private readonly access: Access,
    private readonly indexes: Indexes,
  ) {}

  async get(id: string): Promise<Stored<Delivery> | undefined> {
    return stored(this.access.get<Delivery>(DELIVERIES, id));
  }

  async insert(delivery: Unversioned<Delivery>): Promise<Stored<Delivery>> {
    return insertNew<Delivery>(this.access, DELIVERIES, delivery.id, delivery, `Delivery ${delivery.id}`);
  }

  async update(delivery: Stored<Delivery>): Promise<Stored<Delivery>> {
    return updateAt(this.access, DELIVERIES, delivery.id, delivery, `Delivery ${delivery.id}`);
  }

  async remove(delivery: Stored<Delivery>): Promise<void> {
    this.access.remove(DELIVERIES, delivery.id);
  }

  async list(clientId: string, query: DeliveryQuery): Promise<Page<Stored<Delivery>>> {
    const keep = (d: Stored<Delivery>): boolean =>
      d.client_id === clientId &&
      (query.order_no === undefined || d.order_no === query.order_no) &&
      (query.status === undefined || d.status === query.status) &&
      (query.event === undefined || d.event === query.event) &&
      (query.dueBy === undefined || (d.next_attempt_at !== null && d.next_attempt_at <= query.dueBy)) &&
      (query.dueAfter === undefined || (d.next_attempt_at !== null && d.next_attempt_at > query.dueAfter));
    return pageOf<Delivery, Stored<Delivery>>({
      keys: query.order_no === undefined ? this.indexes.deliveries.byClient.get(clientId) : this.ofOrder(query.order_no),
      cursor: query.cursor,
      limit: query.limit,
      filtered: query.order_no !== undefined || query.status !== undefined || query.event !== undefined || query.dueBy !== undefined || query.dueAfter !== undefined,
      load: (id) => stored(this.access.get<Delivery>(DELIVERIES, id)),
      keep,
      positionOf: (d) => ({ rank: d.seq, id: d.id }),
      open: (d) => d,
    });
  }

  /** One order's deliveries in listing order: a few, where the client's may be many. */
  private ofOrder(orderNo: string): SortedKeys {
    const keys = new SortedKeys();
    for (const id of this.indexes.deliveries.ofOrder(orderNo)) {
      const delivery = this.access.get<Delivery>(DELIVERIES, id);
      if (delivery) keys.add({ rank: delivery.seq, id });
    }
    return keys;
  }

  async countByStatus(clientId: string, status: DeliveryStatus, upTo = Number.MAX_SAFE_INTEGER): Promise<number> {
    return Math.min(upTo, this.indexes.deliveries.statusCounts.get(clientId)?.get(status) ?? 0);
  }

  async settledBefore(olderThan: number, limit: number): Promise<Array<Stored<Delivery>>> {
    const found: Array<Stored<Delivery>> = [];
    for (const id of this.indexes.deliveries.byAge.oldestFirst()) {
      const delivery = stored(this.access.get<Delivery>(DELIVERIES, id));
      if (!delivery) continue;
      if (delivery.created_at >= olderThan || found.length >= limit) break;
      if (delivery.status === 'delivered' || delivery.status === 'failed') found.push(delivery);
    }
    return found;
  }
}

export class EmbeddedSettings implements ClientSettingsRepository {
  constructor(private readonly access: Access) {}

  async get(clientId: string): Promise<Stored<ClientSettings> | undefined> {
    return stored(this.access.get<ClientSettings>(CLIENTS, clientId));
  }

  async put(settings: ClientSettings | Stored<ClientSettings>): Promise<Stored<ClientSettings>> {
    const what = `The settings of client ${settings.client_id}`;
    if ('version' in settings) return updateAt(this.access, CLIENTS, settings.client_id, settings, what);
    return insertNew<ClientSettings>(this.access, CLIENTS, settings.client_id, settings, what);
  }
}

export class EmbeddedCounters implements CounterRepository {
  constructor(private readonly access: Access) {}

  async next(name: string): Promise<number> {
    const value = (this.access.get<number>(COUNTERS, name) ?? 0) + 1;
    this.access.put(COUNTERS, name, value);
    return value;
  }
}

export class EmbeddedMeta implements MetaRepository {
  constructor(private readonly access: Access) {}

  async get<K extends keyof Meta>(key: K): Promise<Meta[K] | undefined> {
    return this.access.get<Meta[K]>(META, key);
  }

  async set<K extends keyof Meta>(key: K, value: Meta[K]): Promise<void> {
    this.access.put(META, key, value);
  }

  async setIfAbsent<K extends keyof Meta>(key: K, value: Meta[K]): Promise<Meta[K]> {
    const kept = this.access.get<Meta[K]>(META, key);
    if (kept !== undefined) return kept;
    this.access.put(META, key, value);
    return value;
  }
}

export class EmbeddedJobs implements JobRepository {
  constructor(
    private readonly access: Access,
    private readonly indexes: Indexes,
  ) {}

  async schedule(job: Job): Promise<void> {
    const id = jobId(job.kind, job.key);
    const current = stored(this.access.get<Job>(JOBS, id));
    this.access.put(JOBS, id, { kind: job.kind, key: job.key, client_id: job.client_id, due_at: job.due_at, version: (current?.version ?? 0) + 1 });
  }

  async cancel(kind: JobKind, key: string): Promise<void> {
    const id = jobId(kind, key);
    if (this.access.get(JOBS, id) !== undefined) this.access.remove(JOBS, id);
  }

  async get(kind: JobKind, key: string): Promise<Stored<Job> | undefined> {
    return stored(this.access.get<Job>(JOBS, jobId(kind, key)));
  }

  async claim({ until, limit, owner, leaseMs, kinds, perClient: asked, skipClients, clientId, ahead }: ClaimOptions): Promise<ClaimedJob[]> {
    const perClient = shareOf(asked);
    const claimed: ClaimedJob[] = [];
    const { claims } = this.indexes.jobs;
    const leaseUntil = Date.now() + leaseMs;
    const taken = new Map<string, number>();
    const lead = leadOf(ahead);
    const open = (queue: JobQueue): boolean =>
      (clientId === undefined || queue.client === clientId) &&
      (kinds === undefined || kinds.includes(queue.kind)) &&
      !skipClients?.has(queue.client);
    // In rounds: each client's earliest due job before any client's second (and so on, up
    // to perClient; in round r, the clients that took r jobs), so however many clients
    // have backlogs, a client whose job just fell due is in the next claim (as long as
    // fewer than `limit` clients have due jobs).
    // Without a share, earliest due first whoever's it is.
    const inRounds = Number.isFinite(perClient);
    let round = 0;
    let tookThisRound = false;
    while (claimed.length < limit && round < perClient) {
      const queue = this.earliest((q) => open(q) && (!inRounds || (taken.get(q.client) ?? 0) === round), lead);
      if (!queue || queue.heap.topAt() - lead(queue.client) > until) {
        if (!tookThisRound) break;
        round += 1;
        tookThisRound = false;
        continue;
      }
      tookThisRound = true;
      const id = queue.heap.topId()!;
      queue.heap.pop();
      const job = stored(this.access.get<Job>(JOBS, id))!; // earliest() only answers live entries
      claims.set(id, { owner, lease_until: leaseUntil, version: job.version });
      claimed.push(copyWith(job, { claimed_by: owner, lease_until: leaseUntil }));
      taken.set(queue.client, (taken.get(queue.client) ?? 0) + 1);
    }
    return claimed;
  }

  async complete(job: ClaimedJob): Promise<void> {
    const id = jobId(job.kind, job.key);
    const current = stored(this.access.get<Job>(JOBS, id));
    // The removal drops the claim once it commits (Indexes.apply); dropping it here would
    // lose the job from the index if the commit failed. A job rescheduled or cancelled
    // since its claim lost the claim when that change committed.
    if (current && current.version === job.version) this.access.remove(JOBS, id);
    else this.indexes.jobs.claims.delete(id);
  }

  async release(job: ClaimedJob): Promise<void> {
    const id = jobId(job.kind, job.key);
    const claim = this.indexes.jobs.claims.get(id);
    if (claim?.owner !== job.claimed_by) return;
    this.indexes.jobs.claims.delete(id);
    const current = stored(this.access.get<Job>(JOBS, id));
    if (current) this.indexes.jobs.requeue(id, current);
  }

  async nextDue({ clientId, kinds, skipClients, ahead }: DueFilter = {}): Promise<number | undefined> {
    const lead = leadOf(ahead);
    const queue = this.earliest(
      (q) => (clientId === undefined || q.client === clientId) && (kinds === undefined || kinds.includes(q.kind)) && !skipClients?.has(q.client),
      lead,
    );
    return queue && this.liveTop(queue) ? queue.heap.topAt() - lead(queue.client) : undefined;
  }

  async count(clientId?: string): Promise<number> {
    if (clientId !== undefined) return this.indexes.jobs.counts.get(clientId) ?? 0;
    let total = 0;
    for (const n of this.indexes.jobs.counts.values()) total += n;
    return total;
  }

  async removeByClient(clientId: string): Promise<number> {
    let removed = 0;
    // Every job of the client is in one of its queues (or claimed); collect ids from both.
    const ids = new Set<string>(this.indexes.jobs.claims.keys());
    for (const queue of this.indexes.jobs.ofClient(clientId)) for (const id of queue.heap.jobIds()) ids.add(id);
    for (const id of ids) {
      const job = this.access.get<Job>(JOBS, id);
      if (!job || job.client_id !== clientId) continue;
      this.access.remove(JOBS, id);
      removed += 1;
    }
    return removed;
  }

  /** Of the queues `accept` lets in, the one whose live top is due earliest (each client's due times shifted back by its lead). */
  private earliest(accept: (queue: JobQueue) => boolean, lead: (clientId: string) => number): JobQueue | undefined {
    let best: JobQueue | undefined;
    let bestAt = Infinity;
    let bestOrder = Infinity;
    for (const queue of this.indexes.jobs.queues.values()) {
      if (!accept(queue) || !this.liveTop(queue)) continue;
      const at = queue.heap.topAt() - lead(queue.client);
      const order = queue.heap.topOrder();
      // At one due time, the job queued first, whatever its kind or client (as on PostgreSQL).
      if (!best || at < bestAt || (at === bestAt && order < bestOrder)) {
        best = queue;
        bestAt = at;
        bestOrder = order;
      }
    }
    return best;
  }

  /** Whether a queue's earliest entry names a due, unclaimed job, once the stale entries before it are dropped. */
  private liveTop(queue: JobQueue): boolean {
    const { heap } = queue;
    for (let id = heap.topId(); id !== undefined; id = heap.topId()) {
      const job = this.access.get<Job>(JOBS, id);
      if (job && job.due_at === heap.topAt() && !this.indexes.jobs.claims.has(id)) return true;
      heap.pop();
    }
    return false;
  }
}
