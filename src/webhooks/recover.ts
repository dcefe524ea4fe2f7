import { JobInterrupted, type Scheduler } from '../jobs/index.js';
import type { Delivery } from '../records/index.js';
import { letRequestsIn } from '../shared/index.js';
import { isSuccess, type DeliveryAttempts } from './attempts.js';
import type { DispatcherDeps } from './deps.js';
import { RECOVER_JOB, WEBHOOK_CONCURRENCY } from './job.js';
import { endpointOf, type Endpoint } from './endpoints.js';
import { MAX_REDELIVERED_ATTEMPTS } from './manual.js';
import { takesAttempts } from './live.js';
import { ListenerNotConnected } from './messages.js';

/** Failed deliveries read, and their jobs scheduled, per unit of work: the event loop is let go between them. */
export const RECOVER_SLICE = 200;

/** The deliveries a recover takes: created at or after `since` and, when given, at or before `until` (client-clock epoch ms). */
export interface RecoverWindow {
  since: number;
  until?: number;
}

const inWindow = (d: Delivery, { since, until }: RecoverWindow): boolean => d.created_at >= since && (until === undefined || d.created_at <= until);

/** What a recover did with the failed deliveries in its window: queued, or left out and why. */
export interface Recovered {
  queued: number;
  skipped: {
    /** Their endpoint is deleted, disabled or has no URL now, or is a listener not connected. */
    endpoint_unavailable: number;
    /** They already have MAX_REDELIVERED_ATTEMPTS attempts (a redelivery of them is refused too). */
    attempt_limit: number;
  };
}

/**
 * Recovery after an outage of a client's receiver, as Svix's "recover" does: every
 * failed delivery of the client created in a window gets one more attempt (trigger
 * `redeliver`, same `webhook-id` and body). The attempts are jobs of their own kind, due
 * at once, run in the scheduler's pool beside the scheduled attempts and within the same
 * caps (per client and in all), so a recover of thousands never holds the request that
 * asked for it, nor more connections to a receiver than its retries would.
 */
export class Recovery {
  constructor(
    private readonly deps: DispatcherDeps,
    private readonly attempts: DeliveryAttempts,
    private readonly closed: () => boolean,
  ) {}

  /** Registers the recover job: its attempts wait on receivers, so it runs in the scheduler's pool. */
  attach(scheduler: Scheduler): void {
    scheduler.register({ kind: RECOVER_JOB, run: (job, at) => this.due(job.key, at), concurrency: WEBHOOK_CONCURRENCY });
  }

  /**
   * Queues an attempt now for each failed delivery of the client in the window whose
   * endpoint takes deliveries now (it exists, has a URL and is enabled; a listener's, when
   * `connected` says its session is connected), a slice per unit
   * of work; says how many, and how many it left out and why. A delivery at
   * MAX_REDELIVERED_ATTEMPTS is left out (as a redelivery of it is refused). Queued again,
   * a delivery's job is moved, not doubled.
   */
  async queue(clientId: string, window: RecoverWindow, connected?: (clientId: string, name: string) => Promise<boolean>): Promise<Recovered> {
    const { storage, clock, registry, endpoints } = this.deps;
    const recovered: Recovered = { queued: 0, skipped: { endpoint_unavailable: 0, attempt_limit: 0 } };
    const client = registry.byId(clientId);
    if (!client) return recovered;
    // A listener away now would see none of its attempts (they end unmade): left out, as an endpoint without a URL is.
    const reachable = async (e: Endpoint) => takesAttempts(e) && (typeof e.listener !== 'string' || !connected || (await connected(clientId, e.listener)));
    // Asked together: on a shared store each listener held by another replica is a question to the replicas.
    const all = await endpoints.list(client);
    const live = new Set((await Promise.all(all.map(async (e) => ((await reachable(e)) ? [e.id] : [])))).flat());
    const now = clock.of(clientId);
    let cursor: string | undefined;
    for (;;) {
      // Newest first, no total counted: a page costs its own scan, and the walk stops at the window's start.
      const page = await storage.deliveries.list(clientId, { status: 'failed', limit: RECOVER_SLICE, cursor, total: false });
      const chosen: Delivery[] = [];
      for (const d of page.items) {
        if (!inWindow(d, window)) continue;
        if (!live.has(endpointOf(d))) recovered.skipped.endpoint_unavailable++;
        else if (d.attempts.length >= MAX_REDELIVERED_ATTEMPTS) recovered.skipped.attempt_limit++;
        else chosen.push(d);
      }
      if (chosen.length > 0) {
        await storage.transaction(async (tx) => {
          for (const d of chosen) await tx.jobs.schedule({ kind: RECOVER_JOB, key: d.id, client_id: clientId, due_at: now });
        });
      }
      recovered.queued += chosen.length;
      const oldest = page.items[page.items.length - 1];
      // A client's deliveries are listed newest first and its clock never goes back: past the window's start, none is in it
      // (but those of an order set up at a step, dated back with it: a provider state or a trigger, not what recover is for).
      if (page.next_cursor === null || (oldest !== undefined && oldest.created_at < window.since)) return recovered;
      cursor = page.next_cursor;
      await letRequestsIn();
    }
  }

  /**
   * A recovered delivery's attempt, to the endpoint it went to: made only while it is
   * still failed (a redelivery may have delivered it meanwhile) and that endpoint takes deliveries; a 2xx marks
   * it delivered, a 410 disables the endpoint, anything else leaves it failed.
   */
  private async due(id: string, at: number): Promise<void> {
    const { storage, registry, endpoints } = this.deps;
    if (this.closed()) throw new JobInterrupted('the webhook dispatcher is closed');
    const delivery = await storage.deliveries.get(id);
    if (delivery?.status !== 'failed' || delivery.attempts.length >= MAX_REDELIVERED_ATTEMPTS) return;
    const client = registry.byId(delivery.client_id);
    const endpoint = client ? await endpoints.get(client, endpointOf(delivery)) : undefined;
    if (!endpoint || !takesAttempts(endpoint)) return;
    // A listener away when its turn comes: nothing attempted, the delivery stays failed (recover it again once it is back).
    const made = await this.attempts.attempt(delivery, endpoint, 'redeliver', null, at).catch((error: unknown) => {
      if (error instanceof ListenerNotConnected) return null;
      throw error;
    });
    if (made === null) return;
    if (!made) throw new JobInterrupted(`recovered attempt of ${id} aborted by shutdown`);
    await this.attempts.record(delivery, made, async (tx, current) => {
      if (current.status !== 'failed') return current;
      if (isSuccess(made.status_code)) return this.attempts.finished(tx, current, 'delivered', null);
      if (made.status_code === 410) return this.attempts.gone(tx, current, at);
      return current;
    }, { scheduled: true });
  }
}
