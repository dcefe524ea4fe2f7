import type { Services } from '../services.js';

/**
 * How often every client's orders are counted, in wall time, besides the counts its own
 * creates call for: what other replicas created, and clients over the limit at start.
 */
export const COUNT_EVERY_MS = 60_000;

/**
 * Retention by count (`--retention-orders <n>`): a client's orders are counted once its
 * creates here since the last count reach a tenth of n, and every client's every
 * COUNT_EVERY_MS; past n, `removeOldest` removes the client's oldest orders down to n.
 * Between counts a client may hold up to a tenth more. One count of a client at a time:
 * creates that call for another meanwhile get one more after it.
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
    private readonly removeOldest: (clientId: string, n: number) => Promise<void>,
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

  /** No count starts from now on; resolves once those running have ended. */
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
      .catch((error: unknown) => this.services.logger.warn({ err: error, client_id: clientId }, "removing a client's orders past --retention-orders failed; they are counted again after its next creates or within a minute"))
      .finally(() => {
        this.counting.delete(clientId);
        if (this.again.delete(clientId) && !this.stopped) void this.count(clientId);
      });
    this.counting.set(clientId, run);
    return run;
  }

  private async keepLimit(clientId: string): Promise<void> {
    if (this.stopped) return;
    const count = await this.services.storage.orders.count(clientId);
    if (count > this.limit) await this.removeOldest(clientId, count - this.limit);
  }
}
