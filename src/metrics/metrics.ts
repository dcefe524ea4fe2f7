import { Counter, Histogram, Registry } from 'prom-client';
import type { SandboxEvent, JobKind, Attempt } from '../records/index.js';
import type { ServedRequest } from '../requests/index.js';
/** How a webhook attempt ended, as `sandbox_webhook_attempts_total{outcome}` counts it. */
export type AttemptOutcome = 'delivered' | 'http_error' | 'timeout' | 'network_error' | 'refused';

/** The outcome of an attempt from what the delivery log keeps of it. */
export function outcomeOf(attempt: Pick<Attempt, 'status_code' | 'error'>): AttemptOutcome {
  if (attempt.status_code !== null) return attempt.status_code >= 200 && attempt.status_code < 300 ? 'delivered' : 'http_error';
  if (attempt.error?.startsWith('refused by webhook target policy')) return 'refused';
  if (attempt.error?.startsWith('timed out')) return 'timeout';
  return 'network_error';
}

/**
 * A registry's text as the exposition format spells its values: prom-client writes a NaN
 * sample (a gauge the store could not read) as `Nan`, which Prometheus takes but the format
 * (and a strict OpenMetrics parser) spells `NaN`.
 */
export const exposition = (text: string): string => text.replace(/ Nan$/gm, ' NaN');

/** Statuses any operation may answer (auth, routing, limits, faults), labelled as they are. */
const COMMON_STATUSES = new Set([200, 201, 400, 401, 403, 404, 405, 408, 413, 415, 429, 431, 500, 502, 503, 504]);

/**
 * The counters and histograms of one sandbox, on a registry of its own (not prom-client's
 * global one), so several sandboxes in one process keep apart. Domain code never sees
 * prom-client: it is told of events through plain callbacks (`sandbox.ts` wires them).
 *
 * @example const metrics = new SandboxMetrics(); metrics.ordersCreated.inc(2); await metrics.registry.metrics()
 */

export class SandboxMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'sandbox_http_requests_total',
    help: 'Requests served from either spec, by operationId and status ("none" when no status line was sent).',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'sandbox_http_request_duration_seconds',
    help: 'Real time from arrival until the answer ended or the connection closed, by operationId and status.',
    labelNames: ['operation', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly ordersCreated = new Counter({ name: 'sandbox_orders_created_total', help: 'Orders created (one per item of a create request).', registers: [this.registry] });
  readonly ordersRemoved = new Counter({
    name: 'sandbox_orders_removed_total',
    help: 'Orders removed by retention, by reason: age (--retention) or count (--retention-orders). Counted by the process that removed them.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly awbsGenerated = new Counter({ name: 'sandbox_awbs_generated_total', help: 'AWBs generated (the awb.generated event).', registers: [this.registry] });
  readonly awbsFailed = new Counter({ name: 'sandbox_awbs_failed_total', help: 'AWB generations failed by scenario (the awb.failed event).', registers: [this.registry] });
  readonly webhookAttempts = new Counter({
    name: 'sandbox_webhook_attempts_total',
    help: 'Webhook attempts made, by outcome: delivered (2xx), http_error, timeout, network_error, refused (by the webhook target policy).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly turnWait = new Histogram({
    name: 'sandbox_request_turn_wait_seconds',
    help: 'How long requests (all but health checks) waited for their turn among the clients\' requests (real seconds; see docs/guides/scenarios-and-time.md, The clock).',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly schedulerLag = new Histogram({
    name: 'sandbox_scheduler_lag_seconds',
    help: 'How late due jobs ran, in real seconds after their due time, by kind (real clock; jobs run by an advance or the start-up catch-up run at their due time by design).',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
    registers: [this.registry],
  });

  /** A request served from a spec (a mount observer). */
  served(served: ServedRequest): void {
    // The statuses the operation documents, plus the envelope's own (auth, limits, faults'
    // 5xx): a fault rule can answer any status, and each would be a series of its own for
    // the life of the process. Any other is counted by its class ("2xx" ... "5xx").
    const { status } = served;
    const known = status !== null && (served.input.operation.statuses.includes(status) || COMMON_STATUSES.has(status));
    const labels = { operation: served.input.operation.operationId, status: status === null ? 'none' : known ? String(status) : `${Math.floor(status / 100)}xx` };
    this.requests.inc(labels);
    this.requestDuration.observe(labels, served.durationMs / 1000);
  }

  /** An order event recorded (an EventBus subscriber: counted in the event's transaction). */
  event(event: Pick<SandboxEvent, 'type'>): void {
    if (event.type === 'awb.generated') this.awbsGenerated.inc();
    else if (event.type === 'awb.failed') this.awbsFailed.inc();
  }

  /** A webhook attempt made (the dispatcher's onAttempt). */
  attempt(attempt: Pick<Attempt, 'status_code' | 'error'>): void {
    this.webhookAttempts.inc({ outcome: outcomeOf(attempt) });
  }

  /** A job ran `lateMs` real milliseconds after it was due (the scheduler's onLate). */
  jobRan(kind: JobKind, lateMs: number): void {
    this.schedulerLag.observe({ kind }, Math.max(0, lateMs) / 1000);
  }
}
