import type { PoolCaps } from './kinds.js';

/** A pool with no cap: the caps of a scheduler that has no pooled kind registered yet. */
const UNCAPPED: PoolCaps = { total: Infinity, perClient: Infinity };

/**
 * Jobs of the pooled kinds in flight (those that wait on something outside the sandbox),
 * per client and in all: a client's slow or silent receiver uses its own share and holds
 * up nobody else.
 */
export class JobPool {
  private readonly perClient = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private waiting: Array<() => void> = [];

  constructor(public caps: PoolCaps = UNCAPPED) {}

  get room(): number {
    return this.caps.total - this.inFlight.size;
  }

  get busy(): boolean {
    return this.inFlight.size > 0;
  }

  /** Clients with no room left. */
  full(): Set<string> {
    const full = new Set<string>();
    for (const [client, n] of this.perClient) if (n >= this.caps.perClient) full.add(client);
    return full;
  }

  /** Jobs of this client in flight. */
  of(clientId: string): number {
    return this.perClient.get(clientId) ?? 0;
  }

  /** Runs `work` in a slot; `ended` runs once the slot is free again. */
  start(clientId: string, work: () => Promise<void>, ended: () => void): void {
    this.perClient.set(clientId, this.of(clientId) + 1);
    // A job's failures are its handler's to handle; one that still escapes must not end the process.
    const running = work().catch(() => undefined).finally(() => {
      const left = this.perClient.get(clientId)! - 1;
      if (left === 0) this.perClient.delete(clientId);
      else this.perClient.set(clientId, left);
      this.inFlight.delete(running);
      for (const wake of this.waiting.splice(0)) wake();
      ended();
    });
    this.inFlight.add(running);
  }

  /** Resolves once a job in flight has ended (at once when none is). */
  slotFreed(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Resolves once no job is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }
}
