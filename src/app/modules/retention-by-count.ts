import { Conflict, letRequestsIn } from '../../shared/index.js';
import type { Services } from '../services.js';

/**
 * How often every client's orders are counted, in wall time, besides the counts its own
 * creates call for: what other replicas created, and clients over the limit at start.
 */
export const COUNT_EVERY_MS = 60_000;
/** Most orders one unit of work removes. */
const SLICE = 500;

/** What one client's removal took away, by record (orders, webhooks), and where it stopped. */
export interface Removed {
  counts: Record<string, number>;
  /** When the oldest order the client keeps was made (its clock), once known. */
  oldestKept?: number;
}

/**
 * Retention by count (`--retention-orders <n>`): a client's orders are counted once its
 * creates here since the last count reach a tenth of n, and every client's every
 * COUNT_EVERY_MS; past n, its oldest orders are removed a slice at a time, each with its
 * webhook deliveries (sent or not: an order that answers 404 gets no webhook) and their
 * jobs, the orders counted again before each slice, so two replicas removing at once
 * never take the client below n. Then `pruneOlder` removes the client's other records
 * older than the oldest order it keeps, and `report` says what went (also after a
 * failure, for what went before it). One count of a client at a time in this process:
 * creates that call for another meanwhile get one more after it. A stop ends a removal
 * between slices.
 */
export class RetentionByCount {
  private readonly createdSince = new Map<string, number>();
  private readonly counting = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly slack: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly limit: number,
    private readonly services: Pick<Services, 'storage' | 'logger' | 'orders' | 'registry'>,
    private readonly pruneOlder: (olderThan: number, clientId: string, removed: Record<string, number>) => Promise<void>,
    private readonly report: (clientId: string, removed: Removed) => void,
    /** Removes the records of orders removed (their webhook deliveries), adding to `removed` how many, by module. */
    private readonly removeWithOrders: (clientId: string, orderNos: readonly string[], removed: Record<string, number>) => Promise<unknown>,
  ) {
    this.slack = Math.max(1, Math.floor(limit / 10));
  }

  start(): void {
    this.services.orders.whenCreated((clientId, count) => {
      const since = (this.createdSince.get(clientId) ?? 0) + count;
      this.createdSince.set(clientId, since);
      if (since >= this.slack) void this.count(clientId);
    });
    this.timer = setInterval(() => this.countAll(), COUNT_EVERY_MS).unref();
    this.countAll();
  }

  /** No count starts from now on, and one running ends after its slice; resolves once they have. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all(this.counting.values());
  }

  private countAll(): void {
    for (const clientId of this.services.registry.clientIds) void this.count(clientId);
  }

  private count(clientId: string): Promise<void> {
    const running = this.counting.get(clientId);
    if (running) {
      this.again.add(clientId);
      return running;
    }
    this.createdSince.delete(clientId);
    const run = this.keepLimit(clientId)
      .catch((error: unknown) => this.services.logger.warn({ err: error, client: clientId }, "removing a client's orders past --retention-orders failed; they are counted again after its next creates or within a minute"))
      .finally(() => {
        this.counting.delete(clientId);
        if (this.again.delete(clientId) && !this.stopped) void this.count(clientId);
      });
    this.counting.set(clientId, run);
    return run;
  }

  private async keepLimit(clientId: string): Promise<void> {
    const removed: Removed = { counts: {} };
    try {
      if (!(await this.removeOldest(clientId, removed))) return;
      removed.oldestKept = (await this.services.storage.orders.createdBefore(Number.MAX_SAFE_INTEGER, 1, clientId))[0]?.created_at;
      if (removed.oldestKept !== undefined) await this.pruneOlder(removed.oldestKept, clientId, removed.counts);
    } finally {
      this.report(clientId, removed);
    }
  }

  /** Removes the client's oldest orders down to the limit, a slice at a time; answers whether it removed any. */
  private async removeOldest(clientId: string, removed: Removed): Promise<boolean> {
    const { storage, orders } = this.services;
    const add = (what: string, n: number): void => {
      if (n > 0) removed.counts[what] = (removed.counts[what] ?? 0) + n;
    };
    let conflicts = 0;
    for (;;) {
      if (this.stopped) return removed.counts.orders !== undefined;
      const excess = (await storage.orders.count(clientId)) - this.limit;
      if (excess <= 0) return removed.counts.orders !== undefined;
      // Never an order made at the client's latest time: among orders made at one time (a
      // clock that did not move) "oldest" would be a draw, and could take one just answered 201.
      const newest = (await storage.orders.list(clientId, { limit: 1 })).items[0]?.created_at ?? Number.MAX_SAFE_INTEGER;
      const oldest = await storage.orders.createdBefore(newest, Math.min(SLICE, excess), clientId);
      if (oldest.length === 0) return removed.counts.orders !== undefined;
      try {
        add('orders', await orders.removeListed(oldest));
        conflicts = 0;
      } catch (error) {
        // Another replica removing the same orders at once: counted and listed again, a few times in a row at most.
        if (!(error instanceof Conflict) || ++conflicts > 3) throw error;
        continue;
      }
      await this.removeWithOrders(clientId, oldest.map((o) => o.order_no), removed.counts);
      await letRequestsIn();
    }
  }
}
