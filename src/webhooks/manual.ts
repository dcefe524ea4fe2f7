import type { Delivery, Stored } from '../records/index.js';
import { Conflict, domainMessages, NotFound, TooManyRequests } from '../shared/index.js';
import { isSuccess, type DeliveryAttempts } from './attempts.js';
import type { DispatcherDeps } from './deps.js';
import type { Endpoint } from './endpoints.js';
import { ListenerNotConnected, webhookMessages } from './messages.js';
import { pingPayload } from './payload.js';
import { removeWithJobs } from './prune.js';
/** Test pings and redeliveries a client may have in flight at once. */
export const MANUAL_ATTEMPTS = 8;

/**
 * Attempts a delivery may have before a redelivery is refused: each one is logged in the
 * delivery (with up to 1 KiB of its answer) and rewrites it, so without a bound one
 * delivery redelivered without end would grow without end, and each rewrite would hold
 * the event loop longer. The retry schedule's own attempts are never refused.
 */
export const MAX_REDELIVERED_ATTEMPTS = 50;

/**
 * Test pings of a client kept in its deliveries, the newest: each is a delivery of no
 * order, which retention by count (orders first, then their deliveries) never reaches, so
 * a partner pinging without end would grow the shared process's memory and data file.
 * Counted per process since its start (a restart forgets which it made).
 */
export const PINGS_KEPT = 100;

/**
 * Attempts a client asks for, outside the retry schedule: test pings and redeliveries.
 * They are made at once, outside the scheduler's pool, so they have a share of their own.
 */
export class ManualAttempts {
  /** Test pings and redeliveries in flight per client. */
  private readonly inFlight = new Map<string, number>();
  /** The ids of the test pings made here per client, oldest first (at most PINGS_KEPT). */
  private readonly pings = new Map<string, string[]>();

  constructor(
    private readonly deps: DispatcherDeps,
    private readonly attempts: DeliveryAttempts,
  ) {}

  /** One attempt now, outside the schedule; a 2xx marks the delivery delivered. Returns the delivery afterwards. */
  redeliver(delivery: Stored<Delivery>, endpoint: Endpoint): Promise<Stored<Delivery>> {
    return this.slot(delivery.client_id, () => this.redeliverNow(delivery, endpoint));
  }

  /** Sends a signed ping to the client's endpoint now; it is logged as a delivery without retries. */
  ping(clientId: string, endpoint: Endpoint): Promise<Stored<Delivery>> {
    return this.slot(clientId, () => this.pingNow(clientId, endpoint));
  }

  /**
   * Runs a test ping or a redelivery of the client within its share: at most
   * MANUAL_ATTEMPTS in flight at once (a partner firing hundreds at a silent receiver
   * would otherwise hold a connection each); past it a TooManyRequests (429).
   */
  private async slot<T>(clientId: string, fn: () => Promise<T>): Promise<T> {
    const inFlight = this.inFlight.get(clientId) ?? 0;
    if (inFlight >= MANUAL_ATTEMPTS) throw new TooManyRequests(webhookMessages.tooManyManualAttempts(MANUAL_ATTEMPTS), 1);
    this.inFlight.set(clientId, inFlight + 1);
    try {
      return await fn();
    } finally {
      const left = (this.inFlight.get(clientId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(clientId, left);
      else this.inFlight.delete(clientId);
    }
  }

  private async redeliverNow(delivery: Stored<Delivery>, endpoint: Endpoint): Promise<Stored<Delivery>> {
    const { attempts } = this;
    const at = this.deps.clock.of(delivery.client_id);
    const made = await attempts.attempt(delivery, endpoint, 'redeliver', null, at).catch((error: unknown) => {
      throw error instanceof ListenerNotConnected ? new Conflict(error.message) : error;
    });
    if (!made) return delivery;
    const after = await attempts.record(delivery, made, async (tx, current) => {
      if (isSuccess(made.status_code)) return attempts.finished(tx, current, 'delivered', null);
      if (made.status_code === 410) return attempts.gone(tx, current, at);
      return current;
    });
    // Removed while the attempt was on its way (a reset, a ping past PINGS_KEPT): no delivery to show it in.
    if (after === undefined) throw new NotFound(domainMessages.deliveryNotFound(delivery.id));
    // A 410 fails it for good, as one to a scheduled attempt does (once: a delivery already failed was graded so then).
    if (made.status_code === 410 && delivery.status !== 'failed' && after.status === 'failed') this.deps.observer?.gaveUp?.(after, made);
    return after;
  }

  private async pingNow(clientId: string, endpoint: Endpoint): Promise<Stored<Delivery>> {
    const { attempts } = this;
    const at = this.deps.clock.of(clientId);
    const delivery = await this.deps.storage.transaction((tx) => attempts.create(tx, clientId, 'ping', null, pingPayload(clientId, at), [], at));
    await this.keepNewest(clientId, delivery.id);
    const made = await attempts.attempt(delivery, endpoint, 'test', null);
    if (!made) return delivery;
    return (await attempts.record(delivery, made, async (tx, current) => {
      if (made.status_code === 410) return attempts.gone(tx, current, at);
      return attempts.finished(tx, current, isSuccess(made.status_code) ? 'delivered' : 'failed', made.error);
    })) ?? delivery;
  }

  /** Counts a new ping of the client; past PINGS_KEPT its oldest is removed (one the store could not remove stays first, for the next ping to try again). */
  private async keepNewest(clientId: string, id: string): Promise<void> {
    let ids = this.pings.get(clientId);
    if (ids === undefined) this.pings.set(clientId, (ids = []));
    ids.push(id);
    while (ids.length > PINGS_KEPT) {
      // Taken off the list before the removal: another ping's removal meanwhile takes the next.
      const oldest = ids.shift()!;
      const removed = await this.deps.storage.transaction((tx) => removeWithJobs(tx, [{ id: oldest }])).then(() => true, () => false);
      if (!removed) {
        ids.unshift(oldest);
        return;
      }
    }
  }
}
