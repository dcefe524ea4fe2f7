import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.js';
import type { Scheduler } from '../clock/scheduler.js';
import type { ClientRegistry } from '../config/clients.js';
import type { SandboxEvent } from '../events.js';
import type { Store } from '../store/store.js';
import { chaosOf, LATE_MS, ReorderWindows } from './chaos.js';
import type { DeliveryLog } from './deliveries.js';
import type { Endpoint, WebhookEndpoints } from './endpoints.js';
import { webhookMessages } from './messages.js';
import { payloadOf, pingPayload } from './payload.js';
import { nextAttemptAt, retryAfterMs } from './retry.js';
import { wrongSecret } from './secret.js';
import { AttemptAborted, send, type SendResult } from './send.js';
import type { Attempt, AttemptTrigger, ChaosMode, Delivery, WebhookEventType, WebhookPayload } from './types.js';

/** The scheduler's job kind of a delivery's next attempt; the key is the delivery id. */
export const WEBHOOK_JOB = 'webhook';

export interface DispatcherDeps {
  store: Store;
  scheduler: Scheduler;
  clock: Clock;
  registry: ClientRegistry;
  endpoints: WebhookEndpoints;
  log: DeliveryLog;
  /** Delay of each scheduled attempt (see retry.ts). */
  retries: number[];
  timeoutMs: number;
  /** Most pending or paused deliveries per client (`--outbox-size`). */
  outboxSize: number;
  logger: Logger;
}

const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
const scheduledAttempts = (d: Delivery): number => d.attempts.filter((a) => a.trigger === 'schedule' && a.chaos !== 'duplicate').length;

/**
 * The outbox and its dispatcher. An event becomes a stored delivery with its next
 * attempt time, handed to the scheduler; each due attempt POSTs the signed body and
 * records the outcome before the next is scheduled, so a restart resumes exactly
 * where the store says. Runs inside scheduler jobs (bounded by its concurrency),
 * never inside the request that caused the event.
 */
export class WebhookDispatcher {
  private readonly shutdown = new AbortController();
  private readonly windows = new ReorderWindows();
  private closed = false;

  constructor(private readonly deps: DispatcherDeps) {
    deps.scheduler.on(WEBHOOK_JOB, (id, at) => this.due(id, at));
  }

  /** Puts an order event into the outbox; its first attempt is due at once unless chaos holds it. */
  enqueue(event: SandboxEvent): void {
    const { endpoints, registry, scheduler, store } = this.deps;
    const client = registry.byId(event.order.client_id);
    if (!client) return;
    const chaos = chaosOf(endpoints.of(client).chaos, event.order.webhook_chaos);
    let due = event.at;
    if (chaos.includes('out_of_order')) due = this.windows.dueAt(client.id, due);
    if (chaos.includes('late')) due += LATE_MS;
    const full = this.deps.log.outstanding(client.id) >= this.deps.outboxSize;
    const delivery = this.create(client.id, event.type, event.order.order_no, payloadOf(event), chaos, event.at);
    if (full) {
      // Kept in the log (redeliverable) but not scheduled: a receiver that never answers cannot grow the outbox without end.
      Object.assign(delivery, { status: 'failed', last_error: webhookMessages.outboxFull(this.deps.outboxSize) });
      this.deps.logger.warn({ client: client.id, delivery: delivery.id, event: delivery.event, outbox_size: this.deps.outboxSize }, 'webhook outbox full');
    } else delivery.next_attempt_at = due;
    this.deps.log.save(delivery);
    store.commit();
    if (!full) scheduler.schedule(WEBHOOK_JOB, delivery.id, due);
  }

  /** Hands every pending delivery to the scheduler (at start, so a restart resumes them). */
  resume(): void {
    for (const d of this.deps.log.all()) {
      // A ping is one attempt, never retried: one cut short by a stop stays as it was.
      if (d.status === 'pending' && d.event !== 'ping') this.deps.scheduler.schedule(WEBHOOK_JOB, d.id, d.next_attempt_at ?? this.deps.clock.now());
    }
  }

  /** Makes the client's paused deliveries due now (after its endpoint is set again). */
  resumePaused(clientId: string): number {
    const now = this.deps.clock.now();
    const paused = this.deps.log.list(clientId, { status: 'paused' });
    for (const d of paused) {
      Object.assign(d, { status: 'pending', next_attempt_at: now, last_error: null });
      this.deps.log.save(d);
      this.deps.scheduler.schedule(WEBHOOK_JOB, d.id, now);
    }
    return paused.length;
  }

  /** One attempt now, outside the schedule; a 2xx marks the delivery delivered. */
  async redeliver(delivery: Delivery, endpoint: Endpoint & { url: string }): Promise<void> {
    const at = this.deps.clock.now();
    const made = await this.attempt(delivery, endpoint, at, 'redeliver', null);
    if (!made) return;
    if (isSuccess(made.status_code)) this.finish(delivery, 'delivered', null);
    else if (made.status_code === 410) this.gone(delivery, at);
    this.commit(delivery);
  }

  /** Sends a signed ping to the client's endpoint now; it is logged as a delivery without retries. */
  async ping(clientId: string, endpoint: Endpoint & { url: string }): Promise<Delivery> {
    const at = this.deps.clock.now();
    const delivery = this.create(clientId, 'ping', null, pingPayload(clientId, at), [], at);
    this.deps.log.save(delivery);
    this.deps.store.commit();
    const made = await this.attempt(delivery, endpoint, at, 'test', null);
    if (made) {
      if (made.status_code === 410) this.gone(delivery, at);
      else this.finish(delivery, isSuccess(made.status_code) ? 'delivered' : 'failed', made.error);
      this.commit(delivery);
    }
    return delivery;
  }

  /** Removes the client's deliveries (reset). Returns how many. */
  removeAll(clientId: string): number {
    const mine = this.deps.log.list(clientId);
    for (const d of mine) {
      this.deps.scheduler.cancel(WEBHOOK_JOB, d.id);
      this.deps.log.remove(d.id);
    }
    this.windows.forget(clientId);
    return mine.length;
  }

  /** Removes settled deliveries (not pending or paused) created before `olderThan` (retention). */
  prune(olderThan: number): number {
    const old = this.deps.log.all().filter((d) => d.created_at < olderThan && (d.status === 'delivered' || d.status === 'failed'));
    for (const d of old) this.deps.log.remove(d.id);
    return old.length;
  }

  /** Aborts attempts in flight without recording them: they stay due, and a restart makes them. */
  close(): void {
    this.closed = true;
    this.shutdown.abort();
  }

  private async due(id: string, at: number): Promise<void> {
    const { log, registry, endpoints, retries } = this.deps;
    const delivery = log.byId(id);
    if (this.closed || !delivery || delivery.status !== 'pending') return;
    const client = registry.byId(delivery.client_id);
    const endpoint = client ? endpoints.of(client) : undefined;
    if (!endpoint?.url || !endpoint.enabled) {
      const reason = !endpoint?.url ? 'no webhook URL is set for this client' : `the endpoint is disabled: ${endpoint.disabled_reason}`;
      this.finish(delivery, 'paused', reason);
      this.commit(delivery);
      return;
    }
    const badSignature = scheduledAttempts(delivery) === 0 && delivery.chaos.includes('bad_signature');
    const made = await this.attempt(delivery, { ...endpoint, url: endpoint.url }, at, 'schedule', badSignature ? 'bad_signature' : null);
    // A redelivery may have settled it while this attempt was on its way: its outcome stands.
    if (!made || delivery.status !== 'pending') return;
    if (isSuccess(made.status_code)) {
      this.finish(delivery, 'delivered', null);
      if (delivery.chaos.includes('duplicate')) await this.attempt(delivery, { ...endpoint, url: endpoint.url }, at, 'schedule', 'duplicate');
    } else if (made.status_code === 410) {
      this.gone(delivery, at);
    } else {
      const next = nextAttemptAt(retries, scheduledAttempts(delivery), at, retryAfterMs(made.retry_after, Date.now()));
      if (next === undefined) this.finish(delivery, 'failed', made.error ?? `HTTP ${made.status_code}`);
      else {
        Object.assign(delivery, { next_attempt_at: next, last_error: made.error ?? `HTTP ${made.status_code}` });
        this.deps.scheduler.schedule(WEBHOOK_JOB, delivery.id, next);
      }
    }
    this.commit(delivery);
  }

  /**
   * POSTs the delivery once and appends the attempt to its log. Undefined when the
   * attempt was aborted by shutdown or the delivery was removed meanwhile.
   */
  private async attempt(
    delivery: Delivery,
    endpoint: Endpoint & { url: string },
    at: number,
    trigger: AttemptTrigger,
    chaos: Attempt['chaos'],
  ): Promise<(Attempt & { retry_after: string | null }) | undefined> {
    let result: SendResult;
    try {
      const secret = chaos === 'bad_signature' ? wrongSecret(delivery.id) : endpoint.secret;
      result = await send({ url: endpoint.url, id: delivery.id, body: delivery.body, secret, timeoutMs: this.deps.timeoutMs, shutdown: this.shutdown.signal });
    } catch (error) {
      if (error instanceof AttemptAborted) return undefined;
      throw error;
    }
    if (this.deps.log.byId(delivery.id) !== delivery) return undefined;
    const { retry_after, ...outcome } = result;
    const attempt: Attempt = { n: delivery.attempts.length + 1, at, trigger, chaos, url: endpoint.url, ...outcome };
    delivery.attempts.push(attempt);
    this.deps.logger.info({ delivery: delivery.id, event: delivery.event, attempt: attempt.n, status: attempt.status_code, ms: attempt.duration_ms, error: attempt.error }, 'webhook attempt');
    return { ...attempt, retry_after };
  }

  private gone(delivery: Delivery, at: number): void {
    const reason = `the receiver answered 410 Gone at ${new Date(at).toISOString()}; PUT /__sandbox/webhook enables it again`;
    this.deps.endpoints.disable(delivery.client_id, reason, at);
    this.finish(delivery, 'failed', 'HTTP 410 Gone: endpoint disabled');
  }

  private finish(delivery: Delivery, status: Delivery['status'], error: string | null): void {
    this.deps.scheduler.cancel(WEBHOOK_JOB, delivery.id);
    Object.assign(delivery, { status, next_attempt_at: null, last_error: error });
  }

  private create(clientId: string, event: WebhookEventType, orderNo: string | null, payload: WebhookPayload, chaos: ChaosMode[], at: number): Delivery {
    const { id, seq } = this.deps.log.nextId();
    return { id, seq, client_id: clientId, event, order_no: orderNo, body: JSON.stringify(payload), chaos, status: 'pending', created_at: at, next_attempt_at: null, last_error: null, attempts: [] };
  }

  private commit(delivery: Delivery): void {
    if (this.deps.log.byId(delivery.id) === delivery) this.deps.log.save(delivery);
    this.deps.store.commit();
  }
}
