import { JobInterrupted, type DropReason, type Scheduler } from '../jobs/index.js';
import { DEFAULT_ENDPOINT, type ChaosMode, type ClaimedJob, type Delivery, type SandboxEvent, type Stored } from '../records/index.js';
import { OneAtATime, WarningThrottle } from '../shared/index.js';
import type { Repositories } from '../store/index.js';
import { DeliveryAttempts, holdReason, isSuccess, type DeliveryState } from './attempts.js';
import { chaosOf, LATE_MS, ReorderWindows } from './chaos.js';
import type { DispatcherDeps } from './deps.js';
import { admits, endpointOf, type Endpoint } from './endpoints.js';
import { HeldCounts } from './held-counts.js';
import { ENDPOINT_WEBHOOK_JOB, WEBHOOK_CONCURRENCY, WEBHOOK_JOB } from './job.js';
import { ManualAttempts } from './manual.js';
import { ListenerNotConnected, unknownClient, webhookMessages } from './messages.js';
import { reachedReceiver } from './relay.js';
import { payloadOf } from './payload.js';
import { pruneSettled, removeDeliveries, removeOrderDeliveries } from './prune.js';
import { Recovery, type Recovered, type RecoverWindow } from './recover.js';
import { whyUnsendable } from './live.js';
import { inSlices, RESUME_SLICE } from './slices.js';

export { RESUME_SLICE } from './slices.js';

/** How often a client's "outbox full" warning may be logged. */
export const OUTBOX_WARNING_INTERVAL_MS = 60_000;

/**
 * The outbox and its dispatcher. An event becomes a stored delivery with a job for
 * its next attempt, in the transaction of the event; each due attempt POSTs the
 * signed body (outside any transaction) and records the outcome, with the next
 * attempt's job, in one transaction; so a restart resumes exactly where the store
 * says. Never runs inside the request that caused the event.
 */
export class WebhookDispatcher {
  private readonly windows = new ReorderWindows();
  private readonly fullWarnings: WarningThrottle;
  private readonly held: HeldCounts;
  /** A client's decisions to hold a delivery for an absent listener, one at a time (see holdForListener). */
  private readonly holds = new OneAtATime();
  private readonly attempts: DeliveryAttempts;
  private readonly manual: ManualAttempts;
  private readonly recovery: Recovery;
  private closed = false;
  /** The error of a delivery the full outbox did not keep: one string, shared by every such delivery. */
  private readonly outboxFull: string;

  constructor(private readonly deps: DispatcherDeps) {
    this.outboxFull = webhookMessages.outboxFull(deps.outboxSize);
    this.fullWarnings = new WarningThrottle(OUTBOX_WARNING_INTERVAL_MS, deps.wallNow);
    this.held = new HeldCounts(deps.outboxSize, deps.wallNow);
    this.attempts = new DeliveryAttempts(deps, this.held);
    this.manual = new ManualAttempts(deps, this.attempts);
    this.recovery = new Recovery(deps, this.attempts, () => this.closed);
  }

  /** Registers the delivery job with the scheduler: attempts wait on receivers, so they run in its pool. */
  attach(scheduler: Scheduler): void {
    const dropped = (job: ClaimedJob, why: DropReason) => this.attempts.unmade(job.key, why);
    scheduler.register({ kind: WEBHOOK_JOB, run: (job, at) => this.due(job.key, at), concurrency: WEBHOOK_CONCURRENCY, dropped });
    scheduler.register({ kind: ENDPOINT_WEBHOOK_JOB, run: (job, at) => this.due(job.key, at), concurrency: WEBHOOK_CONCURRENCY, dropped });
    this.recovery.attach(scheduler);
  }

  /**
   * Puts an order event into the outbox, in the event's transaction: one delivery per
   * endpoint of the client whose filter admits the event, each with its own id, attempts
   * and retries. See `enqueueDefault` for the default endpoint; another endpoint gets a
   * delivery only while it is enabled, its first attempt due at once (unless chaos holds it).
   */
  async enqueue(event: SandboxEvent, tx: Repositories): Promise<void> {
    const { endpoints, registry } = this.deps;
    const client = registry.byId(event.order.client_id) ?? unknownClient(event.order.client_id, webhookMessages.orderNotChanged(event.order.order_no, event.type));
    const [main, ...others] = await endpoints.list(client, tx);
    const chaos = chaosOf(main!.chaos, event.order.webhook_chaos);
    let firstDue: number | undefined;
    // Worked out once per event, and only when some endpoint takes it: the reorder window counts events, not deliveries.
    const dueAt = (): number => (firstDue ??= this.firstDue(client.id, event.at, chaos));
    if (admits(main!, event.type)) await this.enqueueDefault(event, main!, chaos, dueAt, tx);
    for (const endpoint of others) {
      if (!endpoint.enabled || !admits(endpoint, event.type)) continue;
      const due = dueAt();
      const delivery = await this.attempts.create(tx, client.id, event.type, event.order.order_no, payloadOf(event), chaos, event.at, { status: 'pending', next_attempt_at: due, last_error: null }, endpoint.id);
      await tx.jobs.schedule({ kind: ENDPOINT_WEBHOOK_JOB, key: delivery.id, client_id: client.id, due_at: due });
    }
  }

  /**
   * The default endpoint's delivery of an event. To an endpoint that takes deliveries,
   * its first attempt is due at once (unless chaos holds it), however many are waiting:
   * the outbox bound never fails a delivery unattempted. With no URL or a disabled
   * endpoint it is held (`paused`) until one is set; only held deliveries (to any of the
   * client's endpoints, listeners' too: see holdForListener) count toward `--outbox-size`,
   * and past it a new one is kept as `failed` ("Outbox full").
   */
  private async enqueueDefault(event: SandboxEvent, endpoint: Endpoint, chaos: ChaosMode[], dueAt: () => number, tx: Repositories): Promise<void> {
    const clientId = endpoint.client_id;
    const hold = holdReason(endpoint);
    const held = hold === undefined ? 0 : await this.held.of(clientId, () => tx.deliveries.countByStatus(clientId, 'paused', this.deps.outboxSize), () => tx.deliveries.ownByStatus?.(clientId, 'paused') ?? 0);
    const create = (state: DeliveryState) => this.attempts.create(tx, clientId, event.type, event.order.order_no, payloadOf(event), chaos, event.at, state);
    if (hold !== undefined && held >= this.deps.outboxSize) {
      // Kept in the log (redeliverable) but not held: a client that never sets a URL cannot grow the outbox without end.
      await create({ status: 'failed', next_attempt_at: null, last_error: this.outboxFull });
      this.warnOutboxFull(clientId, held);
      return;
    }
    if (hold !== undefined) {
      await create({ status: 'paused', next_attempt_at: null, last_error: hold });
      this.held.added(clientId);
      return;
    }
    const due = dueAt();
    const delivery = await create({ status: 'pending', next_attempt_at: due, last_error: null });
    await tx.jobs.schedule({ kind: WEBHOOK_JOB, key: delivery.id, client_id: clientId, due_at: due });
  }

  /** When an event's first attempts are due: at once, unless the chaos modes hold them back. */
  private firstDue(clientId: string, at: number, chaos: ChaosMode[]): number {
    let due = at;
    if (chaos.includes('out_of_order')) due = this.windows.dueAt(clientId, due);
    if (chaos.includes('late')) due += LATE_MS;
    return due;
  }

  /**
   * Makes up to `limit` of the client's paused deliveries due now, in `tx` (the endpoint
   * was set or enabled again); returns how many.
   */
  async resumePaused(tx: Repositories, clientId: string, limit = RESUME_SLICE): Promise<number> {
    this.held.forget(clientId);
    const now = this.deps.clock.of(clientId);
    // A client with none paused (the usual case) lists nothing.
    if ((await tx.deliveries.countByStatus(clientId, 'paused', 1)) === 0) return 0;
    // The default endpoint's only: a listener's held deliveries wait for its own connect (resumeEndpoint).
    const page = await tx.deliveries.list(clientId, { status: 'paused', endpoint_id: DEFAULT_ENDPOINT, limit, total: false });
    for (const d of page.items) {
      await tx.deliveries.update({ ...d, status: 'pending', next_attempt_at: now, last_error: null });
      await tx.jobs.schedule({ kind: WEBHOOK_JOB, key: d.id, client_id: clientId, due_at: now });
    }
    return page.items.length;
  }

  /**
   * Every held delivery to one endpoint other than the default made due now (a listener
   * connected under its name), RESUME_SLICE per unit of work. Returns how many.
   */
  resumeEndpoint(clientId: string, endpointId: string): Promise<number> {
    return inSlices(async () => {
      const slice = await this.deps.storage.transaction(async (tx) => {
        if ((await tx.deliveries.countByStatus(clientId, 'paused', 1)) === 0) return 0;
        const now = this.deps.clock.of(clientId);
        const page = await tx.deliveries.list(clientId, { status: 'paused', endpoint_id: endpointId, limit: RESUME_SLICE, total: false });
        for (const d of page.items) {
          await tx.deliveries.update({ ...d, status: 'pending', next_attempt_at: now, last_error: null });
          await tx.jobs.schedule({ kind: ENDPOINT_WEBHOOK_JOB, key: d.id, client_id: clientId, due_at: now });
        }
        return page.items.length;
      });
      if (slice > 0) this.held.forget(clientId);
      return slice;
    });
  }

  /** Fails every held delivery to one endpoint (a listener not seen for `--listener-expiry`, its endpoint being removed) with `reason`. Returns how many. */
  failHeld(clientId: string, endpointId: string, reason: string): Promise<number> {
    return inSlices(() =>
      this.deps.storage.transaction(async (tx) => {
        if ((await tx.deliveries.countByStatus(clientId, 'paused', 1)) === 0) return 0;
        const page = await tx.deliveries.list(clientId, { status: 'paused', endpoint_id: endpointId, limit: RESUME_SLICE, total: false });
        for (const d of page.items) await this.attempts.finished(tx, d, 'failed', reason);
        return page.items.length;
      }),
    );
  }

  /** Every paused delivery of the client made due now, RESUME_SLICE per unit of work with the event loop let go between them. Returns how many. */
  resumeAllPaused(clientId: string): Promise<number> {
    return inSlices(() => this.deps.storage.transaction((tx) => this.resumePaused(tx, clientId)));
  }

  /** One attempt now, outside the schedule; a 2xx marks the delivery delivered. Returns the delivery afterwards. */
  redeliver(delivery: Stored<Delivery>, endpoint: Endpoint): Promise<Stored<Delivery>> {
    return this.manual.redeliver(delivery, endpoint);
  }

  /** Queues one more attempt of every failed delivery of the client created in the window (see Recovery); says how many, and what it left out. */
  recover(clientId: string, window: RecoverWindow, connected?: (clientId: string, name: string) => Promise<boolean>): Promise<Recovered> {
    return this.recovery.queue(clientId, window, connected);
  }

  /** Sends a signed ping to the client's endpoint now; it is logged as a delivery without retries. */
  ping(clientId: string, endpoint: Endpoint & { url: string }): Promise<Stored<Delivery>> {
    return this.manual.ping(clientId, endpoint);
  }

  /** Removes the client's deliveries (a reset), or those of the orders named (they are gone), with their jobs; the held ones are counted afresh. Returns how many. */
  remove(clientId: string, orderNos?: readonly string[]): Promise<number> {
    const recount = () => this.held.forget(clientId);
    recount();
    if (orderNos) return removeOrderDeliveries(this.deps.storage, clientId, orderNos, recount);
    this.windows.forget(clientId);
    return removeDeliveries(this.deps.storage, clientId, recount);
  }

  /** Removes settled deliveries (delivered or failed) created before `olderThan` (retention), of every client or of the one given. */
  prune(olderThan: number, clientId?: string): Promise<number> {
    return pruneSettled(this.deps.storage, olderThan, clientId);
  }

  /**
   * Aborts attempts still in flight without recording them: they stay due, and another
   * replica or the next start makes them (a receiver may then see their webhook-id twice).
   * A stop calls it only once its jobs in flight had the webhook timeout to finish and be
   * recorded (app's stopServices), so it aborts only what a store that does not answer held up.
   */
  close(): void {
    this.closed = true;
    this.attempts.abort();
  }

  /** A delivery's scheduled attempt, due: made, recorded, and the next one scheduled unless it settled. */
  private async due(id: string, at: number): Promise<void> {
    const { storage, registry, endpoints, retries } = this.deps;
    const { attempts } = this;
    if (this.closed) throw new JobInterrupted('the webhook dispatcher is closed');
    const delivery = await storage.deliveries.get(id);
    if (!delivery || delivery.status !== 'pending') return;
    const client = registry.byId(delivery.client_id) ?? unknownClient(delivery.client_id, webhookMessages.attemptNotMade(id));
    const endpoint = await endpoints.get(client, endpointOf(delivery));
    const unsendable = whyUnsendable(delivery, endpoint);
    if (unsendable || !endpoint || (!endpoint.url && endpoint.listener === null)) {
      await storage.transaction(async (tx) => {
        const current = await tx.deliveries.get(id);
        if (current?.status === 'pending') await attempts.finished(tx, current, unsendable?.status ?? 'failed', unsendable?.reason ?? null);
      });
      return;
    }
    const target = endpoint;
    // The attempt is logged at its due time; on a real clock it may be made long after (the
    // catch-up after a stop), and its next retry counts from when it started, or a long stop
    // would use the schedule up at once.
    const startedAt = this.deps.clock.mode === 'real' ? Math.max(at, this.deps.clock.of(delivery.client_id)) : at;
    let made;
    try {
      made = await attempts.attempt(delivery, target, 'schedule', null, at);
    } catch (error) {
      if (!(error instanceof ListenerNotConnected)) throw error;
      await this.holdForListener(delivery.client_id, id, error.message);
      return;
    }
    if (!made) throw new JobInterrupted(`attempt of ${id} aborted by shutdown`);
    // Set when this attempt failed the delivery for good (its last retry, or a 410).
    let failedForGood = false;
    const after = await attempts.record(delivery, made, (tx, current) => {
      failedForGood = false;
      return attempts.scheduledOutcome(tx, current, made, startedAt, retries, () => (failedForGood = true));
    }, { scheduled: true });
    if (failedForGood && after?.status === 'failed' && reachedReceiver(made)) this.deps.observer?.gaveUp?.(after, made);
    // Once the message is acknowledged: the copies its chaos asks for (duplicate, bad_signature), on a
    // real clock each at the time it is sent (after the answer to the one before); on a manual one at the attempt's.
    if (after?.status === 'delivered' && isSuccess(made.status_code)) await attempts.copies(after, target, this.deps.clock.mode === 'real' ? undefined : at);
  }

  /**
   * A due delivery whose listener is away: held as the default endpoint holds without a
   * URL (not attempted, no retry used; its connect resumes it), within the same bound:
   * the client's held deliveries, to every endpoint, count toward `--outbox-size`, and
   * past it the delivery is kept as `failed` ("Outbox full", redeliverable) instead, so
   * listeners that connected once cannot grow the outbox without end. Attempts run side by
   * side, so a client's decisions are taken one at a time in this process: two counted
   * together would both see room for one.
   */
  private async holdForListener(clientId: string, id: string, reason: string): Promise<void> {
    const { storage, outboxSize } = this.deps;
    const full = await this.holds.run(clientId, () =>
      storage.transaction(async (tx) => {
        const current = await tx.deliveries.get(id);
        if (current?.status !== 'pending') return undefined;
        const held = await this.held.of(clientId, () => tx.deliveries.countByStatus(clientId, 'paused', outboxSize), () => tx.deliveries.ownByStatus?.(clientId, 'paused') ?? 0);
        if (held < outboxSize) {
          await this.attempts.finished(tx, current, 'paused', reason);
          return undefined;
        }
        await this.attempts.finished(tx, current, 'failed', webhookMessages.outboxFull(outboxSize));
        return held;
      }),
    );
    if (full !== undefined) this.warnOutboxFull(clientId, full);
  }

  /** One warning per client per minute (wall time) while its outbox is full, not one per delivery. */
  private warnOutboxFull(clientId: string, held: number): void {
    const left = this.fullWarnings.take(clientId);
    if (left === undefined) return;
    this.deps.logger.warn(
      { client: clientId, held, outbox_size: this.deps.outboxSize, failed_unlogged: left },
      'webhook outbox full: new deliveries held for want of a webhook URL or a connected listener are kept as failed until one takes them (at most one such warning per client per minute)',
    );
  }
}
