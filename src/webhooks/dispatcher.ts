import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clocks } from '../clock/index.js';
import { JobInterrupted, type Scheduler } from '../jobs/index.js';
import type { ClientRegistry } from '../clients/index.js';
import type { SandboxEvent } from '../records/index.js';
import { TooManyRequests } from '../shared/index.js';
import type { SettingsWriter } from '../store/index.js';
import type { Repositories, Storage, Stored } from '../store/index.js';
import { chaosOf, LATE_MS, ReorderWindows } from './chaos.js';
import { WarningThrottle } from '../shared/index.js';
import { HeldCounts } from './held-counts.js';
import type { Endpoint, WebhookEndpoints } from './endpoints.js';
import { webhookMessages } from './messages.js';
import { payloadOf, pingPayload } from './payload.js';
import { nextAttemptAt, retryAfterMs } from './retry.js';
import { wrongSecret } from './secret.js';
import { AttemptAborted, send, type SendResult } from './send.js';
import type { TargetGuard } from './target-guard.js';
import type { Attempt, AttemptTrigger, ChaosMode, Delivery, WebhookEventType, WebhookPayload } from '../records/index.js';

import { WEBHOOK_CONCURRENCY, WEBHOOK_JOB } from './job.js';

export { WEBHOOK_JOB };

/** How often a client's "outbox full" warning may be logged. */
export const OUTBOX_WARNING_INTERVAL_MS = 60_000;

export interface DispatcherDeps {
  storage: Storage;
  clock: Clocks;
  registry: ClientRegistry;
  endpoints: WebhookEndpoints;
  /** Runs the unit that records a 410 Gone, which disables the endpoint in the client's settings. */
  settings: SettingsWriter;
  /** Delay of each scheduled attempt (see retry.ts). */
  retries: number[];
  timeoutMs: number;
  /** Most deliveries held per client for want of a URL or a live endpoint (`--outbox-size`). */
  outboxSize: number;
  /** Makes delivery ids (the `webhook-id`) reproducible. */
  seed: string;
  logger: Logger;
  /** Wall-clock time for throttling warnings (tests pass their own). Default Date.now. */
  wallNow?: () => number;
  /** The webhook target policy: URLs set through the API are checked on connect; configured ones are trusted. */
  guard: TargetGuard;
  /** Told of every attempt made, once it has an outcome (metrics). */
  onAttempt?: (attempt: Attempt) => void;
  /** Told as each attempt starts and once it has an outcome, with its delivery as it stood before (the readiness report). */
  observer?: AttemptObserver;
}

/** Watches attempts as they are made; `delivery.attempts` holds the earlier attempts only. */
export interface AttemptObserver {
  starting(delivery: Delivery, chaos: Attempt['chaos']): void;
  made(delivery: Delivery, attempt: Attempt): void;
}

type Made = Attempt & { retry_after: string | null };

const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** Why deliveries to this endpoint wait instead of being attempted, or undefined when it takes them. */
const holdReason = (endpoint: Endpoint): string | undefined => {
  if (!endpoint.url) return 'no webhook URL is set for this client';
  if (!endpoint.enabled) return `the endpoint is disabled (${endpoint.disabled_reason ?? 'no reason'}); PUT /__sandbox/webhook enables it again`;
  return undefined;
};
const scheduledAttempts = (d: Delivery): number => d.attempts.filter((a) => a.trigger === 'schedule' && a.chaos !== 'duplicate').length;

/** Paused deliveries made due again per unit of work when an endpoint is set or enabled again. */
export const RESUME_SLICE = 200;

/** Test pings and redeliveries a client may have in flight at once. */
export const MANUAL_ATTEMPTS = 8;

/**
 * Attempts a delivery may have before a redelivery is refused: each one is logged in the
 * delivery (with up to 1 KiB of its answer) and rewrites it, so a partner redelivering one
 * delivery thousands of times grew it past a megabyte and each rewrite held the loop for
 * tens of milliseconds. The retry schedule's own attempts are never refused.
 */
export const MAX_REDELIVERED_ATTEMPTS = 50;

/**
 * The outbox and its dispatcher. An event becomes a stored delivery with a job for
 * its next attempt, in the transaction of the event; each due attempt POSTs the
 * signed body (outside any transaction) and records the outcome, with the next
 * attempt's job, in one transaction; so a restart resumes exactly where the store
 * says. Never runs inside the request that caused the event.
 */
export class WebhookDispatcher {
  private readonly shutdown = new AbortController();
  private readonly windows = new ReorderWindows();
  /** Test pings and redeliveries in flight per client: they are made at once, outside the scheduler's pool, so they have a share of their own. */
  private readonly manual = new Map<string, number>();
  private readonly fullWarnings: WarningThrottle;
  private readonly held: HeldCounts;
  private closed = false;

  constructor(private readonly deps: DispatcherDeps) {
    this.fullWarnings = new WarningThrottle(OUTBOX_WARNING_INTERVAL_MS, deps.wallNow);
    this.held = new HeldCounts(deps.outboxSize, deps.wallNow);
  }

  /** Registers the delivery job with the scheduler: attempts wait on receivers, so they run in its pool. */
  attach(scheduler: Scheduler): void {
    scheduler.register({ kind: WEBHOOK_JOB, run: (job, at) => this.due(job.key, at), concurrency: WEBHOOK_CONCURRENCY });
  }

  /**
   * Puts an order event into the outbox, in the event's transaction. To an endpoint that
   * takes deliveries, its first attempt is due at once (unless chaos holds it), however
   * many are waiting: the outbox bound never fails a delivery unattempted. With no URL
   * or a disabled endpoint it is held (`paused`) until one is set; only held deliveries
   * count toward `--outbox-size`, and past it a new one is kept as `failed` ("Outbox full").
   */
  async enqueue(event: SandboxEvent, tx: Repositories): Promise<void> {
    const { endpoints, registry } = this.deps;
    const client = registry.byId(event.order.client_id);
    if (!client) return;
    const endpoint = await endpoints.of(client, tx);
    const chaos = chaosOf(endpoint.chaos, event.order.webhook_chaos);
    const hold = holdReason(endpoint);
    const held = hold === undefined ? 0 : await this.held.of(client.id, () => tx.deliveries.countByStatus(client.id, 'paused', this.deps.outboxSize));
    const create = (state: Pick<Delivery, 'status' | 'next_attempt_at' | 'last_error'>) => this.create(tx, client.id, event.type, event.order.order_no, payloadOf(event), chaos, event.at, state);
    if (hold !== undefined && held >= this.deps.outboxSize) {
      // Kept in the log (redeliverable) but not held: a client that never sets a URL cannot grow the outbox without end.
      await create({ status: 'failed', next_attempt_at: null, last_error: webhookMessages.outboxFull(this.deps.outboxSize) });
      this.warnOutboxFull(client.id, held);
      return;
    }
    if (hold !== undefined) {
      await create({ status: 'paused', next_attempt_at: null, last_error: hold });
      this.held.added(client.id);
      return;
    }
    let due = event.at;
    if (chaos.includes('out_of_order')) due = this.windows.dueAt(client.id, due);
    if (chaos.includes('late')) due += LATE_MS;
    const delivery = await create({ status: 'pending', next_attempt_at: due, last_error: null });
    await tx.jobs.schedule({ kind: WEBHOOK_JOB, key: delivery.id, client_id: client.id, due_at: due });
  }

  /**
   * Makes up to `limit` of the client's paused deliveries due now, in `tx` (the endpoint
   * was set or enabled again); returns how many.
   */
  async resumePaused(tx: Repositories, clientId: string, limit = RESUME_SLICE): Promise<number> {
    this.held.forget(clientId);
    const now = this.deps.clock.of(clientId);
    const page = await tx.deliveries.list(clientId, { status: 'paused', limit });
    for (const d of page.items) {
      await tx.deliveries.update({ ...d, status: 'pending', next_attempt_at: now, last_error: null });
      await tx.jobs.schedule({ kind: WEBHOOK_JOB, key: d.id, client_id: clientId, due_at: now });
    }
    return page.items.length;
  }

  /**
   * Every paused delivery of the client made due now, RESUME_SLICE per unit of work with
   * the event loop let go between them: the 10,000 an outbox may hold, in one unit,
   * held every other client's requests for about a second. Returns how many.
   */
  async resumeAllPaused(clientId: string): Promise<number> {
    let resumed = 0;
    for (;;) {
      const slice = await this.deps.storage.transaction((tx) => this.resumePaused(tx, clientId));
      resumed += slice;
      if (slice < RESUME_SLICE) return resumed;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Runs a test ping or a redelivery of the client within its share: at most
   * MANUAL_ATTEMPTS in flight at once (a partner firing hundreds at a silent receiver
   * would otherwise hold a connection each); past it a TooManyRequests (429).
   */
  private async manualSlot<T>(clientId: string, fn: () => Promise<T>): Promise<T> {
    const inFlight = this.manual.get(clientId) ?? 0;
    if (inFlight >= MANUAL_ATTEMPTS) throw new TooManyRequests(webhookMessages.tooManyManualAttempts(MANUAL_ATTEMPTS), 1);
    this.manual.set(clientId, inFlight + 1);
    try {
      return await fn();
    } finally {
      const left = (this.manual.get(clientId) ?? 1) - 1;
      if (left > 0) this.manual.set(clientId, left);
      else this.manual.delete(clientId);
    }
  }

  /** One attempt now, outside the schedule; a 2xx marks the delivery delivered. Returns the delivery afterwards. */
  redeliver(delivery: Stored<Delivery>, endpoint: Endpoint & { url: string }): Promise<Stored<Delivery>> {
    return this.manualSlot(delivery.client_id, () => this.redeliverNow(delivery, endpoint));
  }

  private async redeliverNow(delivery: Stored<Delivery>, endpoint: Endpoint & { url: string }): Promise<Stored<Delivery>> {
    const at = this.deps.clock.of(delivery.client_id);
    const made = await this.attempt(delivery, endpoint, 'redeliver', null, at);
    if (!made) return delivery;
    return (await this.record(delivery, made, async (tx, current) => {
      if (isSuccess(made.status_code)) return this.finished(tx, current, 'delivered', null);
      if (made.status_code === 410) return this.gone(tx, current, at);
      return current;
    })) ?? delivery;
  }

  /** Sends a signed ping to the client's endpoint now; it is logged as a delivery without retries. */
  ping(clientId: string, endpoint: Endpoint & { url: string }): Promise<Stored<Delivery>> {
    return this.manualSlot(clientId, () => this.pingNow(clientId, endpoint));
  }

  private async pingNow(clientId: string, endpoint: Endpoint & { url: string }): Promise<Stored<Delivery>> {
    const at = this.deps.clock.of(clientId);
    const delivery = await this.deps.storage.transaction((tx) => this.create(tx, clientId, 'ping', null, pingPayload(clientId, at), [], at));
    const made = await this.attempt(delivery, endpoint, 'test', null);
    if (!made) return delivery;
    return (await this.record(delivery, made, async (tx, current) => {
      if (made.status_code === 410) return this.gone(tx, current, at);
      return this.finished(tx, current, isSuccess(made.status_code) ? 'delivered' : 'failed', made.error);
    })) ?? delivery;
  }

  /** Removes the client's deliveries and their jobs (reset). Returns how many. */
  async removeAll(clientId: string): Promise<number> {
    this.windows.forget(clientId);
    this.held.forget(clientId);
    let removed = 0;
    for (;;) {
      const page = await this.deps.storage.deliveries.list(clientId, { limit: 500 });
      if (page.items.length === 0) return removed;
      await this.deps.storage.transaction(async (tx) => {
        for (const d of page.items) {
          await tx.jobs.cancel(WEBHOOK_JOB, d.id);
          await tx.deliveries.remove(d);
        }
      });
      this.held.forget(clientId);
      removed += page.items.length;
    }
  }

  /** Removes settled deliveries (delivered or failed) created before `olderThan` (retention). */
  async prune(olderThan: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const old = await this.deps.storage.deliveries.settledBefore(olderThan, 500);
      if (old.length === 0) return removed;
      await this.deps.storage.transaction(async (tx) => {
        for (const d of old) await tx.deliveries.remove(d);
      });
      removed += old.length;
    }
  }

  /** Aborts attempts in flight without recording them: they stay due, and a restart makes them. */
  close(): void {
    this.closed = true;
    this.shutdown.abort();
  }

  private async due(id: string, at: number): Promise<void> {
    const { storage, registry, endpoints, retries } = this.deps;
    if (this.closed) throw new JobInterrupted('the webhook dispatcher is closed');
    const delivery = await storage.deliveries.get(id);
    if (!delivery || delivery.status !== 'pending') return;
    const client = registry.byId(delivery.client_id);
    const endpoint = client ? await endpoints.of(client) : undefined;
    if (!endpoint?.url || !endpoint.enabled) {
      const reason = (endpoint && holdReason(endpoint)) ?? 'no webhook URL is set for this client';
      await storage.transaction(async (tx) => {
        const current = await tx.deliveries.get(id);
        if (current?.status === 'pending') await this.finished(tx, current, 'paused', reason);
      });
      return;
    }
    const target = { ...endpoint, url: endpoint.url };
    const badSignature = scheduledAttempts(delivery) === 0 && delivery.chaos.includes('bad_signature');
    const made = await this.attempt(delivery, target, 'schedule', badSignature ? 'bad_signature' : null, at);
    if (!made) throw new JobInterrupted(`attempt of ${id} aborted by shutdown`);
    const after = await this.record(delivery, made, async (tx, current) => {
      // A redelivery may have settled it while this attempt was on its way: its outcome stands.
      if (current.status !== 'pending') return current;
      if (isSuccess(made.status_code)) return this.finished(tx, current, 'delivered', null);
      if (made.status_code === 410) return this.gone(tx, current, at);
      const error = made.error ?? `HTTP ${made.status_code}`;
      const next = nextAttemptAt(retries, scheduledAttempts(current), at, retryAfterMs(made.retry_after, Date.now()));
      if (next === undefined) return this.finished(tx, current, 'failed', error);
      await tx.jobs.schedule({ kind: WEBHOOK_JOB, key: id, client_id: current.client_id, due_at: next });
      return tx.deliveries.update({ ...current, next_attempt_at: next, last_error: error });
    });
    if (after?.status === 'delivered' && after.chaos.includes('duplicate') && made.chaos === null) {
      const duplicate = await this.attempt(after, target, 'schedule', 'duplicate', at);
      if (duplicate) await this.record(delivery, duplicate, async (_tx, current) => current);
    }
  }

  /** One warning per client per minute (wall time) while its outbox is full, not one per delivery. */
  private warnOutboxFull(clientId: string, held: number): void {
    const left = this.fullWarnings.take(clientId);
    if (left === undefined) return;
    this.deps.logger.warn(
      { client: clientId, held, outbox_size: this.deps.outboxSize, failed_unlogged: left },
      'webhook outbox full: new deliveries are kept as failed until a webhook URL is set (at most one such warning per client per minute)',
    );
  }

  /** POSTs the delivery once. Undefined when the attempt was aborted by shutdown. */
  private async attempt(delivery: Delivery, endpoint: Endpoint & { url: string }, trigger: AttemptTrigger, chaos: Attempt['chaos'], at = this.deps.clock.of(delivery.client_id)): Promise<Made | undefined> {
    let result: SendResult;
    try {
      const secret = chaos === 'bad_signature' ? wrongSecret(delivery.id) : endpoint.secret;
      const { agent, refusal } = this.deps.guard.route(endpoint.url, endpoint.source !== 'runtime');
      this.deps.observer?.starting(delivery, chaos);
      result = await send({ url: endpoint.url, id: delivery.id, body: delivery.body, secret, timeoutMs: this.deps.timeoutMs, shutdown: this.shutdown.signal, dispatcher: agent, refusal });
    } catch (error) {
      if (error instanceof AttemptAborted) return undefined;
      throw error;
    }
    const made = { n: 0, at, trigger, chaos, url: endpoint.url, ...result };
    this.deps.onAttempt?.(made);
    this.deps.observer?.made(delivery, made);
    return made;
  }

  /**
   * Appends an attempt to the delivery as it stands now and applies `decide`, in one
   * transaction. Undefined when the delivery was removed meanwhile (a reset). A 410
   * Gone disables the endpoint, a write of the client's settings: that unit goes through
   * the settings writer, and is run again whole if it meets another change of them.
   */
  private record(
    { id, client_id: clientId }: Pick<Delivery, 'id' | 'client_id'>,
    made: Made,
    decide: (tx: Repositories, current: Stored<Delivery>) => Promise<Stored<Delivery>>,
  ): Promise<Stored<Delivery> | undefined> {
    const inUnit = <T>(unit: (tx: Repositories) => Promise<T>): Promise<T> =>
      made.status_code === 410 ? this.deps.settings.unit(clientId, unit) : this.deps.storage.transaction(unit);
    return inUnit(async (tx) => {
      const found = await tx.deliveries.get(id);
      if (!found) return undefined;
      const { retry_after: _retryAfter, ...outcome } = made;
      const attempt: Attempt = { ...outcome, n: found.attempts.length + 1 };
      const current = await tx.deliveries.update({ ...found, attempts: [...found.attempts, attempt] });
      this.deps.logger.info({ delivery: id, event: current.event, attempt: attempt.n, status: attempt.status_code, ms: attempt.duration_ms, error: attempt.error }, 'webhook attempt');
      return decide(tx, current);
    });
  }

  private async gone(tx: Repositories, delivery: Stored<Delivery>, at: number): Promise<Stored<Delivery>> {
    const reason = `the receiver answered 410 Gone at ${new Date(at).toISOString()}`;
    await this.deps.endpoints.disable(tx, delivery.client_id, reason, at);
    return this.finished(tx, delivery, 'failed', 'HTTP 410 Gone: endpoint disabled');
  }

  private async finished(tx: Repositories, delivery: Stored<Delivery>, status: Delivery['status'], error: string | null): Promise<Stored<Delivery>> {
    if (status === 'paused') this.held.added(delivery.client_id);
    else if (delivery.status === 'paused') this.held.forget(delivery.client_id);
    await tx.jobs.cancel(WEBHOOK_JOB, delivery.id);
    return tx.deliveries.update({ ...delivery, status, next_attempt_at: null, last_error: error });
  }

  /** A new delivery, written once in its first state (a ping's: pending, no attempt due). */
  private async create(
    tx: Repositories,
    clientId: string,
    event: WebhookEventType,
    orderNo: string | null,
    payload: WebhookPayload,
    chaos: ChaosMode[],
    at: number,
    state: Pick<Delivery, 'status' | 'next_attempt_at' | 'last_error'> = { status: 'pending', next_attempt_at: null, last_error: null },
  ): Promise<Stored<Delivery>> {
    // `seq` orders the listing (sandbox-wide, never shown); the id counts the client's own
    // deliveries only, so it shows nothing of other clients' activity, even to one who knows the seed.
    const seq = await tx.counters.next('delivery');
    const own = await tx.counters.next(`delivery:${clientId}`);
    const id = `msg_${createHash('sha256').update(`${this.deps.seed}:delivery:${clientId}:${own}`).digest('hex').slice(0, 24)}`;
    return tx.deliveries.insert({ id, seq, client_id: clientId, event, order_no: orderNo, body: JSON.stringify(payload), chaos, created_at: at, attempts: [], ...state });
  }
}
