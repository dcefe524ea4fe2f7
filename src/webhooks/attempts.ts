import { hash } from 'node:crypto';
import { DEFAULT_ENDPOINT, listenerTarget, type Attempt, type AttemptTrigger, type ChaosMode, type Delivery, type WebhookEventType, type WebhookPayload, type Stored } from '../records/index.js';
import type { Repositories } from '../store/index.js';
import type { DropReason } from '../jobs/index.js';
import { sharedAbortController, Unavailable } from '../shared/index.js';
import type { DispatcherDeps } from './deps.js';
import { endpointOf, type Endpoint } from './endpoints.js';
import type { HeldCounts } from './held-counts.js';
import { wrongSecret } from './secret.js';
import { AttemptAborted, send, type SendResult } from './send.js';
import { jobKindOf } from './job.js';
import { cappedRetryAfterMs, nextAttemptAt } from './retry.js';
import { reachedReceiver, signedHeaders } from './relay.js';
import { ListenerNotConnected, webhookMessages } from './messages.js';
/** The wait before an outcome the store could not take is tried again. */
const RECORD_RETRY_MS = 1_000;

/** How many of a delivery's attempts were its schedule's (not chaos copies, not manual): the retries used. */
const scheduledAttempts = (d: Delivery): number => d.attempts.filter((a) => a.trigger === 'schedule' && a.chaos === null).length;

/** An attempt as made: what the delivery logs, and the receiver's Retry-After. */
export type Made = Attempt & { retry_after: string | null };

/** The state a new delivery is written in. */
export type DeliveryState = Pick<Delivery, 'status' | 'next_attempt_at' | 'last_error'>;

export const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** Why deliveries to this endpoint wait instead of being attempted, or undefined when it takes them. */
export const holdReason = (endpoint: Endpoint): string | undefined => {
  if (!endpoint.url) return 'no webhook URL is set for this client';
  if (!endpoint.enabled) return `the endpoint is disabled (${endpoint.disabled_reason ?? 'no reason'}); PUT /__sandbox/webhook enables it again`;
  return undefined;
};

/**
 * Deliveries and their attempts: a new delivery written, one signed POST made, its
 * outcome recorded in the delivery, and a delivery settled.
 */
export class DeliveryAttempts {
  private readonly shutdown = sharedAbortController();
  /** The deliveries a 410 failed in a unit of work, as that unit returns them: logged once it committed (see record). */
  private readonly goneIn = new WeakSet<Stored<Delivery>>();

  constructor(
    private readonly deps: DispatcherDeps,
    private readonly held: HeldCounts,
  ) {}

  /** Aborts attempts in flight: they end as undefined, unrecorded. */
  abort(): void {
    this.shutdown.abort();
  }

  /**
   * POSTs the delivery once (to a listener endpoint: hands it to the listener through the
   * relay). Undefined when the attempt was aborted by shutdown; throws ListenerNotConnected
   * when the endpoint is a listener that no process holds (nothing was attempted).
   */
  async attempt(delivery: Delivery, endpoint: Endpoint, trigger: AttemptTrigger, chaos: Attempt['chaos'], at = this.deps.clock.of(delivery.client_id)): Promise<Made | undefined> {
    if (endpoint.listener !== null) return this.relayed(delivery, endpoint, endpoint.listener, trigger, chaos, at);
    if (!endpoint.url) throw new Error(`endpoint ${endpoint.id} has no URL`);
    let result: SendResult;
    try {
      const secret = chaos === 'bad_signature' ? wrongSecret(delivery.id) : endpoint.secret;
      const { agent, refusal } = this.deps.guard.route(endpoint.url, endpoint.source !== 'runtime');
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
   * An attempt through a listener: signed as `send` signs, handed to the relay, the
   * listener's answer taken as the receiver's. The target policy does not apply: the
   * partner's machine makes the only connection.
   */
  private async relayed(delivery: Delivery, endpoint: Endpoint, name: string, trigger: AttemptTrigger, chaos: Attempt['chaos'], at: number): Promise<Made | undefined> {
    const { relay } = this.deps;
    if (!relay) throw new ListenerNotConnected(name);
    const secret = chaos === 'bad_signature' ? wrongSecret(delivery.id) : endpoint.secret;
    const sentAt = new Date();
    const headers = signedHeaders(delivery.id, delivery.body, secret, sentAt);
    const outcome = await relay.attempt(
      { client_id: delivery.client_id, listener: name, delivery_id: delivery.id, event: delivery.event, order_no: delivery.order_no, timeout_ms: this.deps.timeoutMs, headers, body: delivery.body, secret: endpoint.secret, ...(chaos ? { chaos } : {}) },
      this.shutdown.signal,
    );
    if (outcome === undefined) return undefined;
    if (outcome === 'not_connected') throw new ListenerNotConnected(name);
    const made = { n: 0, at, trigger, chaos, url: listenerTarget(name), webhook_timestamp: Math.floor(sentAt.getTime() / 1000), ...outcome };
    this.deps.onAttempt?.(made);
    // The report grades what reached a receiver: an attempt the listener never forwarded says nothing of it.
    if (reachedReceiver(made)) this.deps.observer?.made(delivery, made);
    return made;
  }

  /**
   * Appends an attempt to the delivery as it stands now and applies `decide`, in one
   * transaction. Undefined when the delivery was removed meanwhile (a reset). A 410
   * Gone disables the endpoint, a write of the client's settings: that unit goes through
   * the settings writer, and is run again whole if it meets another change of them.
   * `scheduled`: a job's attempt, whose outcome is tried again while the store cannot take it.
   */
  async record(
    { id, client_id: clientId }: Pick<Delivery, 'id' | 'client_id'>,
    made: Made,
    decide: (tx: Repositories, current: Stored<Delivery>) => Promise<Stored<Delivery>>,
    { scheduled = false }: { scheduled?: boolean } = {},
  ): Promise<Stored<Delivery> | undefined> {
    const inUnit = <T>(unit: (tx: Repositories) => Promise<T>): Promise<T> =>
      made.status_code === 410 ? this.deps.settings.unit(clientId, unit) : this.deps.storage.transaction(unit);
    const { retry_after: _retryAfter, ...outcome } = made;
    // The receiver has the webhook: the outcome of a scheduled attempt lost here would make
    // it again (the same webhook-id twice). While the store cannot take it, it is tried
    // again, until recordWithinMs after the attempt or a stop that ran out of time (abort).
    // A manual one (redeliver, ping) answers its request at once, as any write does.
    const until = Date.now() + (scheduled ? (this.deps.recordWithinMs ?? 0) : 0);
    for (let tries = 0; ; tries += 1) {
      try {
        const recorded = await inUnit(async (tx) => {
          const found = await tx.deliveries.get(id);
          if (!found) return undefined;
          // A unit whose commit was cut off may have been saved after all: the attempt is not logged twice.
          if (tries > 0 && found.attempts.some((a) => a.at === made.at && a.webhook_timestamp === made.webhook_timestamp && a.duration_ms === made.duration_ms)) return found;
          const attempt: Attempt = { ...outcome, n: found.attempts.length + 1 };
          const current = await tx.deliveries.update({ ...found, attempts: [...found.attempts, attempt] });
          // The endpoint by its id (a URL may carry a partner's credentials), and the copy a chaos made, which is not a failure of the delivery.
          const shown = { endpoint: endpointOf(current), ...(attempt.chaos ? { chaos: attempt.chaos } : {}) };
          this.deps.logger.info({ client: current.client_id, delivery: id, event: current.event, ...shown, attempt: attempt.n, status: attempt.status_code, ms: attempt.duration_ms, error: attempt.error }, 'webhook attempt');
          return decide(tx, current);
        });
        if (recorded && this.goneIn.has(recorded)) {
          this.deps.logger.warn({ client: recorded.client_id, endpoint: endpointOf(recorded), delivery: id }, 'webhook endpoint disabled: its receiver answered 410 Gone (PUT /__sandbox/webhook or PATCH its endpoint with {"enabled": true} enables it again)');
        }
        return recorded;
      } catch (error) {
        if (!(error instanceof Unavailable) || Date.now() >= until || this.shutdown.signal.aborted) throw error;
        await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_MS));
      }
    }
  }

  /**
   * The copies of an acknowledged message its chaos asks for, each recorded: the same message
   * again (duplicate), then again with a forged signature (bad_signature), under the
   * webhook-id the receiver has seen, so that only verifying the signature refuses it (not a
   * refusal of any first sight of an id). A listener gone meanwhile gets none: each copy is
   * logged as not forwarded, so the log says why it never came (and a trigger waiting for
   * its copies stops waiting). Each is logged at `at`, or without it at the client's time
   * when it is sent.
   */
  async copies(delivery: Stored<Delivery>, endpoint: Endpoint, at?: number): Promise<void> {
    // The delivery as each copy's attempt was recorded: the forged copy is judged knowing how the duplicate was answered.
    let now = delivery;
    for (const chaos of ['duplicate', 'bad_signature'] as const) {
      if (!delivery.chaos.includes(chaos)) continue;
      const copy = await this.attempt(now, endpoint, 'schedule', chaos, at).catch((error: unknown) => {
        if (error instanceof ListenerNotConnected) return this.unforwarded(now, error.listener, chaos, at);
        throw error;
      });
      if (copy) now = (await this.record(now, copy, async (_tx, current) => current)) ?? now;
    }
  }

  /** A copy its listener was gone for: not handed to any receiver, so nothing the readiness report grades. */
  private unforwarded(delivery: Delivery, listener: string, chaos: NonNullable<Attempt['chaos']>, at = this.deps.clock.of(delivery.client_id)): Made {
    const error = `not forwarded: the listener ${listener} was not connected when this copy was due`;
    return { n: 0, at, trigger: 'schedule', chaos, url: listenerTarget(listener), webhook_timestamp: Math.floor(Date.now() / 1000), status_code: null, duration_ms: 0, error, response_body: '', retry_after: null };
  }

  /**
   * A scheduled attempt's outcome on its delivery as it stands (`current`, the attempt
   * appended): delivered; failed on a 410 Gone (its endpoint disabled); else tried again on
   * the `retries` schedule or, none left, failed. `failedForGood` is told when it failed.
   */
  async scheduledOutcome(tx: Repositories, current: Stored<Delivery>, made: Made, at: number, retries: number[], failedForGood: () => void): Promise<Stored<Delivery>> {
    // A redelivery may have settled it while this attempt was on its way: its outcome stands.
    if (current.status !== 'pending') return current;
    if (isSuccess(made.status_code)) return this.finished(tx, current, 'delivered', null);
    if (made.status_code === 410) {
      failedForGood();
      return this.gone(tx, current, at);
    }
    const error = made.error ?? `HTTP ${made.status_code}`;
    const next = nextAttemptAt(retries, scheduledAttempts(current), at, cappedRetryAfterMs(made.retry_after, Date.now()));
    if (next === undefined) {
      failedForGood();
      return this.finished(tx, current, 'failed', error);
    }
    await tx.jobs.schedule({ kind: jobKindOf(current), key: current.id, client_id: current.client_id, due_at: next });
    return tx.deliveries.update({ ...current, next_attempt_at: next, last_error: error });
  }

  /** The receiver answered 410 Gone: the delivery's endpoint is disabled and the delivery failed. */
  async gone(tx: Repositories, delivery: Stored<Delivery>, at: number): Promise<Stored<Delivery>> {
    const reason = `the receiver answered 410 Gone at ${new Date(at).toISOString()}`;
    await this.deps.endpoints.disable(tx, delivery.client_id, reason, at, endpointOf(delivery));
    const failed = await this.finished(tx, delivery, 'failed', 'HTTP 410 Gone: endpoint disabled');
    this.goneIn.add(failed);
    return failed;
  }

  /**
   * A delivery whose job was dropped (its last try failed: the sandbox could not make an
   * attempt, as opposed to one that failed; or its client is not configured here): failed,
   * so recover can send it again.
   */
  async unmade(id: string, why: DropReason = 'failed'): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      const current = await tx.deliveries.get(id);
      if (current?.status === 'pending') await this.finished(tx, current, 'failed', why === 'failed' ? webhookMessages.attemptsDropped : webhookMessages.clientUnconfigured);
    });
  }

  /** Settles the delivery (or holds it): no attempt is due any more. */
  async finished(tx: Repositories, delivery: Stored<Delivery>, status: Delivery['status'], error: string | null): Promise<Stored<Delivery>> {
    if (status === 'paused') this.held.added(delivery.client_id);
    else if (delivery.status === 'paused') this.held.forget(delivery.client_id);
    await tx.jobs.cancel(jobKindOf(delivery), delivery.id);
    return tx.deliveries.update({ ...delivery, status, next_attempt_at: null, last_error: error });
  }

  /** A new delivery, written once in its first state (a ping's: pending, no attempt due). */
  async create(
    tx: Repositories,
    clientId: string,
    event: WebhookEventType,
    orderNo: string | null,
    payload: WebhookPayload,
    chaos: ChaosMode[],
    at: number,
    state: DeliveryState = { status: 'pending', next_attempt_at: null, last_error: null },
    endpointId?: string,
  ): Promise<Stored<Delivery>> {
    // `seq` orders the listing (sandbox-wide, never shown); the id counts the client's own
    // deliveries only, so it shows nothing of other clients' activity, even to one who knows the seed.
    const seq = await tx.counters.rank('delivery');
    const own = await tx.counters.next(`delivery:${clientId}`);
    const id = `msg_${hash('sha256', `${this.deps.seed}:delivery:${clientId}:${own}`, 'hex').slice(0, 24)}`;
    // The default endpoint's deliveries carry no endpoint id, as they did before there were others.
    const to = endpointId === undefined || endpointId === DEFAULT_ENDPOINT ? {} : { endpoint_id: endpointId };
    return tx.deliveries.insert({ id, seq, client_id: clientId, ...to, event, order_no: orderNo, body: JSON.stringify(payload), chaos, created_at: at, attempts: [], ...state });
  }
}
