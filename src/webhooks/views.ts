import { iso } from '../orders/index.js';
import { mask } from '../shared/index.js';
import { endpointOf, type Endpoint } from './endpoints.js';
import type { Delivery, DeliveryStatus } from '../records/index.js';

/** A client's endpoint as `GET /__sandbox/webhook` shows it; `maskSecret` for a read_only token (`whse…xyz`). */
export function endpointView(endpoint: Endpoint, retries: number[], timeoutMs: number, maskSecret = false) {
  return {
    url: endpoint.url,
    secret: maskSecret ? mask(endpoint.secret) : endpoint.secret,
    state: !endpoint.url ? 'no_url' : endpoint.enabled ? 'enabled' : 'disabled',
    enabled: endpoint.url !== null && endpoint.enabled,
    disabled_at: iso(endpoint.disabled_at),
    disabled_reason: endpoint.disabled_reason,
    source: endpoint.source,
    chaos: endpoint.chaos,
    events: endpoint.events,
    retry_schedule_ms: retries,
    timeout_ms: timeoutMs,
  };
}

/**
 * One endpoint as `/__sandbox/webhooks/endpoints` shows it; `maskSecret` for a read_only
 * token. `url` or `listener` names where its deliveries go (a listener: a `listen` session).
 */
export function webhookEndpointView(endpoint: Endpoint, { maskSecret, connected, now }: { maskSecret: boolean; connected: boolean; now: number }) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    listener: endpoint.listener,
    // A listener's: whether a `listen` session holds it now, and when one last did: while one
    // does, now (on the client's clock: the stored time is written every few real minutes, hours
    // of a sped-up or advanced clock).
    ...(endpoint.listener !== null ? { connected, last_seen_at: iso(connected ? Math.max(now, endpoint.last_seen_at ?? 0) : endpoint.last_seen_at) } : {}),
    description: endpoint.description,
    events: endpoint.events,
    enabled: endpoint.enabled,
    state: !endpoint.url && !endpoint.listener ? 'no_url' : endpoint.enabled ? 'enabled' : 'disabled',
    secret: maskSecret ? mask(endpoint.secret) : endpoint.secret,
    disabled_at: iso(endpoint.disabled_at),
    disabled_reason: endpoint.disabled_reason,
    source: endpoint.source,
    created_at: iso(endpoint.created_at),
    updated_at: iso(endpoint.updated_at),
  };
}

/** A delivery's status as the control API shows it: a pending one whose attempt is due (on the client's clock `now`) is `queued`. */
export const shownStatus = (d: Delivery, now: number): DeliveryStatus | 'queued' =>
  d.status === 'pending' && d.next_attempt_at !== null && d.next_attempt_at <= now ? 'queued' : d.status;

/** A delivery with all its attempts, as the delivery log shows it (`now`: the client's clock). */
export function deliveryView(d: Delivery, now: number) {
  return {
    id: d.id,
    endpoint_id: endpointOf(d),
    event: d.event,
    order_no: d.order_no,
    status: shownStatus(d, now),
    chaos: d.chaos,
    created_at: iso(d.created_at),
    next_attempt_at: iso(d.next_attempt_at),
    last_error: d.last_error,
    payload: JSON.parse(d.body) as unknown,
    attempts: d.attempts.map((a) => ({ ...a, at: iso(a.at) })),
  };
}
