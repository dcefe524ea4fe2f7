import type { SandboxEventType } from './event.js';

/** Every event a webhook can carry: the order events, and the ping of `POST /__sandbox/webhooks/test`. */
export type WebhookEventType = SandboxEventType | 'ping';

/** Receiver-testing misbehaviour, per client (config) or per order (`X-Sandbox-Webhook-Chaos`). */
export type ChaosMode = 'duplicate' | 'late' | 'out_of_order' | 'bad_signature';

/**
 * pending: an attempt is due at `next_attempt_at`; delivered: a 2xx was answered;
 * failed: every scheduled attempt failed, or the receiver answered 410 Gone;
 * paused: due while the client had no URL or a disabled endpoint, resumed by `PUT /__sandbox/webhook`.
 */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'paused';

/** What made an attempt: the retry schedule, a redeliver request, or the test ping. */
export type AttemptTrigger = 'schedule' | 'redeliver' | 'test';

/** One POST to the receiver, as the delivery log keeps it. Times are sandbox epoch ms. */
export interface Attempt {
  n: number;
  at: number;
  trigger: AttemptTrigger;
  /** The chaos this attempt played, if any. */
  chaos: 'duplicate' | 'bad_signature' | null;
  url: string;
  /** The `webhook-timestamp` header sent (real epoch seconds). */
  webhook_timestamp: number;
  /** HTTP status answered, or null when there was no answer (refused, timed out). */
  status_code: number | null;
  /** Real milliseconds the attempt took. */
  duration_ms: number;
  error: string | null;
  /** The first 1 KB of the response body. */
  response_body: string;
}

/** One message to one client's endpoint and every attempt to deliver it. */
export interface Delivery {
  /** Also the `webhook-id` header, the same on every attempt. */
  id: string;
  /** Order of creation, for stable listing. */
  seq: number;
  client_id: string;
  /** The endpoint it goes to; absent for the default endpoint (and in data written before there were others). */
  endpoint_id?: string;
  event: WebhookEventType;
  order_no: string | null;
  /** The exact JSON body sent on every attempt. */
  body: string;
  chaos: ChaosMode[];
  status: DeliveryStatus;
  created_at: number;
  next_attempt_at: number | null;
  /** Why the last attempt did not deliver, or why the delivery is paused. */
  last_error: string | null;
  attempts: Attempt[];
}

/** The body of the awb.generated webhook (DESIGN.md). Times are Unix epoch seconds. */
export interface AwbGeneratedPayload {
  event: 'awb.generated';
  batch_id: string;
  order_no: string;
  order_code: string;
  courier_code: string;
  awb: string;
  generated_at: number;
}

export interface AwbFailedPayload {
  event: 'awb.failed';
  batch_id: string;
  order_no: string;
  order_code: string;
  courier_code: string;
  reason: string;
  failed_at: number;
}

export interface OrderCancelledPayload {
  event: 'order.cancelled';
  batch_id: string;
  order_no: string;
  order_code: string;
  courier_code: string;
  awb: string | null;
  cancelled_at: number;
}

export interface PingPayload {
  event: 'ping';
  client_id: string;
  message: string;
  sent_at: number;
}

export type WebhookPayload = AwbGeneratedPayload | AwbFailedPayload | OrderCancelledPayload | PingPayload;
