import type { Order, Delivery, DeliveryStatus, Job, JobKind, Stored } from '../../records/index.js';
import { DELIVERIES, JOBS, ORDERS } from './collections.js';
import { DueHeap } from './due-heap.js';
import { ShardedMap } from './sharded-map.js';
import { SortedKeys } from './sorted-keys.js';
import type { Change } from './unit-of-work.js';
const perClient = <T>(map: Map<string, T>, clientId: string, make: () => T): T => {
  let value = map.get(clientId);
  if (value === undefined) map.set(clientId, (value = make()));
  return value;
};

/** The lookups of orders: by AWB, batches, and each client's listing. */
export class OrderIndex {
  /** Sharded: these grow with the orders, and one big Map's growth step would hold the event loop (see ShardedMap). */
  readonly byAwb = new ShardedMap<string>();
  /**
   * How many orders each batch has: a batch id is taken while one of its orders is kept,
   * and forgotten with its last (retention), as a restart forgets it; a shared deployment
   * runs for weeks, its partners' creates ever new batches.
   */
  private readonly batches = new ShardedMap<number>();
  readonly byClient = new Map<string, SortedKeys>();
  /** Every order by creation, for retention. */
  readonly byAge = new SortedKeys();

  add(order: Order): void {
    if (order.awb) this.byAwb.set(order.awb, order.order_no);
    this.joinBatch(order.batch_id);
    const position = { rank: order.created_at, id: order.order_no };
    perClient(this.byClient, order.client_id, () => new SortedKeys()).add(position);
    this.byAge.add(position);
  }

  /** An order changed in place: its listing positions (client, creation time, number) stay, only its lookups move. */
  update(before: Order, after: Order): void {
    if (before.client_id !== after.client_id || before.created_at !== after.created_at) {
      this.remove(before);
      this.add(after);
      return;
    }
    if (before.awb !== after.awb && before.awb && this.byAwb.get(before.awb) === before.order_no) this.byAwb.delete(before.awb);
    if (after.awb) this.byAwb.set(after.awb, after.order_no);
    if (before.batch_id !== after.batch_id) {
      this.leaveBatch(before.batch_id);
      this.joinBatch(after.batch_id);
    }
  }

  /** Whether an order of the batch is kept. */
  hasBatch(batchId: string): boolean {
    return this.batches.has(batchId);
  }

  remove(order: Order): void {
    if (order.awb && this.byAwb.get(order.awb) === order.order_no) this.byAwb.delete(order.awb);
    this.leaveBatch(order.batch_id);
    const position = { rank: order.created_at, id: order.order_no };
    this.byClient.get(order.client_id)?.remove(position);
    this.byAge.remove(position);
  }

  private joinBatch(batchId: string): void {
    this.batches.set(batchId, (this.batches.get(batchId) ?? 0) + 1);
  }

  private leaveBatch(batchId: string): void {
    const left = (this.batches.get(batchId) ?? 0) - 1;
    if (left > 0) this.batches.set(batchId, left);
    else this.batches.delete(batchId);
  }
}

/** Each client's deliveries in listing order, each order's, and how many have each status. */
export class DeliveryIndex {
  readonly byClient = new Map<string, SortedKeys>();
  /**
   * Each order's delivery ids (a few: its events), so a listing of one order's deliveries
   * (the readiness report reads one at every tracking read) does not read all of its
   * client's. Sharded, as it grows with the orders (see ShardedMap); an id alone, not an
   * array, for an order of one delivery.
   */
  private readonly byOrder = new ShardedMap<string | string[]>();
  readonly statusCounts = new Map<string, Map<DeliveryStatus, number>>();
  readonly byAge = new SortedKeys();
  /**
   * Each client's paused deliveries (held for an endpoint that cannot take them yet), in
   * listing order: resuming them when the endpoint comes back reads these, not every
   * delivery of the client.
   */
  readonly paused = new Map<string, SortedKeys>();

  add(delivery: Delivery): void {
    perClient(this.byClient, delivery.client_id, () => new SortedKeys()).add({ rank: delivery.seq, id: delivery.id });
    this.byAge.add({ rank: delivery.created_at, id: delivery.id });
    if (delivery.order_no !== null) {
      const known = this.byOrder.get(delivery.order_no);
      this.byOrder.set(delivery.order_no, known === undefined ? delivery.id : [...(typeof known === 'string' ? [known] : known), delivery.id]);
    }
    this.count(delivery, 1);
  }

  /** The ids of an order's deliveries, in no order. */
  ofOrder(orderNo: string): readonly string[] {
    const known = this.byOrder.get(orderNo);
    return known === undefined ? [] : typeof known === 'string' ? [known] : known;
  }

  /** A delivery changed in place: it keeps its listing positions; only the status counts move. */
  update(before: Delivery, after: Delivery): void {
    if (before.client_id !== after.client_id || before.seq !== after.seq || before.created_at !== after.created_at || before.order_no !== after.order_no) {
      this.remove(before);
      this.add(after);
      return;
    }
    this.count(before, -1);
    this.count(after, 1);
  }

  remove(delivery: Delivery): void {
    this.byClient.get(delivery.client_id)?.remove({ rank: delivery.seq, id: delivery.id });
    this.byAge.remove({ rank: delivery.created_at, id: delivery.id });
    if (delivery.order_no !== null) {
      const left = this.ofOrder(delivery.order_no).filter((id) => id !== delivery.id);
      if (left.length === 0) this.byOrder.delete(delivery.order_no);
      else this.byOrder.set(delivery.order_no, left.length === 1 ? left[0]! : left);
    }
    this.count(delivery, -1);
  }

  private count(delivery: Delivery, by: number): void {
    const counts = perClient(this.statusCounts, delivery.client_id, () => new Map<DeliveryStatus, number>());
    counts.set(delivery.status, (counts.get(delivery.status) ?? 0) + by);
    if (delivery.status !== 'paused') return;
    const position = { rank: delivery.seq, id: delivery.id };
    if (by > 0) perClient(this.paused, delivery.client_id, () => new SortedKeys()).add(position);
    else this.paused.get(delivery.client_id)?.remove(position);
  }
}

/** The key of a job's queue: its kind and client. */
const queueKey = (job: Pick<Job, 'kind' | 'client_id'>): string => `${job.kind}\u0000${job.client_id}`;

/** One queue of due jobs: one client's jobs of one kind. */
export interface JobQueue {
  client: string;
  kind: JobKind;
  /** Entries ordered by due time, then by when they were queued across every queue: jobs due at one time are claimed in that order. */
  heap: DueHeap;
}

/**
 * Dead entries a queue's heap may hold beyond as many as it has live jobs before it is
 * compacted (DueHeap.retain): a pass over a few thousand entries, once their jobs went.
 */
export const DEAD_ENTRIES_KEPT = 4_096;

/**
 * Due jobs per client and kind, earliest first (a heap each, with lazy deletion: an
 * entry whose job has since moved or gone is dropped when it reaches the top), so a
 * claim can take one kind or leave out busy clients without looking at their jobs.
 * Claims are kept here, in memory only: one process owns the data file (its lock), so
 * a claim never outlives the process that made it.
 *
 * Dead entries do not pile up: a queue whose last job goes is emptied at once, and one
 * whose dead entries outnumber its live jobs (by DEAD_ENTRIES_KEPT) is compacted as its
 * jobs go. Left to reach the top, a mass cancel's entries (a reset's tracking steps) would
 * be dropped in one synchronous loop at the scheduler's next look, holding every client's
 * requests for as long.
 */
export class JobIndex {
  readonly queues = new Map<string, JobQueue>();
  readonly counts = new Map<string, number>();
  readonly claims = new Map<string, { owner: string; lease_until: number; version: number }>();
  /** How many job records were indexed at start (the start-up cost is in proportion to this). */
  loaded = 0;
  /**
   * The highest version of any job indexed since start. A job scheduled again after a
   * cancel takes a version above it, never one a claim of the job cancelled may hold.
   */
  highestVersion = 0;
  private queued = 0;
  /** Job records per queue (kind and client), whatever their heap holds. */
  private readonly live = new Map<string, number>();

  /** `jobOf`: the committed job record of an id, which tells a queue's live entries from its dead ones. */
  constructor(private readonly jobOf: (id: string) => Job | undefined) {}

  /** Whether a queue's entry (`id` due `at`) names a job that is still due then and not claimed. */
  isLive(job: Job | undefined, id: string, at: number): boolean {
    return job !== undefined && job.due_at === at && !this.claims.has(id);
  }

  add(id: string, job: Stored<Job>): void {
    this.requeue(id, job);
    if (job.version > this.highestVersion) this.highestVersion = job.version;
    this.counts.set(job.client_id, (this.counts.get(job.client_id) ?? 0) + 1);
    const key = queueKey(job);
    this.live.set(key, (this.live.get(key) ?? 0) + 1);
  }

  remove(job: Job): void {
    this.counts.set(job.client_id, (this.counts.get(job.client_id) ?? 1) - 1);
    const key = queueKey(job);
    const left = (this.live.get(key) ?? 1) - 1;
    const queue = this.queues.get(key);
    if (left > 0) {
      this.live.set(key, left);
      const bound = 2 * left + DEAD_ENTRIES_KEPT;
      if (queue && queue.heap.size > bound) {
        const live = (id: string, at: number) => this.isLive(this.jobOf(id), id, at);
        queue.heap.retain(live);
        // Still over: jobs written again at their due times, each queued as often. One entry each then,
        // or every later remove would compact again.
        if (queue.heap.size > bound) queue.heap.retain(live, true);
      }
      return;
    }
    this.live.delete(key);
    // No job of this queue is left: every entry of its heap is dead.
    if (queue && queue.heap.size > 0) queue.heap = new DueHeap();
  }

  /** Puts a job (back) among the due ones. */
  requeue(id: string, job: Job): void {
    const key = queueKey(job);
    let queue = this.queues.get(key);
    if (!queue) this.queues.set(key, (queue = { client: job.client_id, kind: job.kind, heap: new DueHeap() }));
    queue.heap.push({ at: job.due_at, id, order: (this.queued += 1) });
  }

  /** The queues of one client (every kind). */
  *ofClient(clientId: string): Iterable<JobQueue> {
    for (const queue of this.queues.values()) if (queue.client === clientId) yield queue;
  }
}

/** The indexes of the embedded store, kept in step with every committed change. */
export class Indexes {
  readonly orders = new OrderIndex();
  readonly deliveries = new DeliveryIndex();
  readonly jobs: JobIndex;

  /** `jobOf`: the committed job record of an id (see JobIndex). */
  constructor(jobOf: (id: string) => Job | undefined) {
    this.jobs = new JobIndex(jobOf);
  }

  /** Brings the indexes up to date with committed changes. Returns the earliest due time of the jobs scheduled, per client. */
  apply(changes: Change[]): Map<string, number> {
    const earliest = new Map<string, number>();
    for (const { collection, key, before, after } of changes) {
      // An update keeps a record's place in its listings: moving it would splice two arrays
      // the size of all orders (by age) per AWB or step, work that grows with the data.
      if (collection === ORDERS) {
        if (before && after) this.orders.update(before as Order, after as Order);
        else if (before) this.orders.remove(before as Order);
        else if (after) this.orders.add(after as Order);
      } else if (collection === DELIVERIES) {
        if (before && after) this.deliveries.update(before as Delivery, after as Delivery);
        else if (before) this.deliveries.remove(before as Delivery);
        else if (after) this.deliveries.add(after as Delivery);
      } else if (collection === JOBS) {
        if (before) this.jobs.remove(before as Job);
        this.jobs.claims.delete(key);
        if (after) {
          const job = after as Stored<Job>;
          this.jobs.add(key, job);
          earliest.set(job.client_id, Math.min(earliest.get(job.client_id) ?? Infinity, job.due_at));
        }
      }
    }
    return earliest;
  }
}
