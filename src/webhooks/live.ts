import type { Delivery } from '../records/index.js';
import { holdReason } from './attempts.js';
import type { Endpoint } from './endpoints.js';
import { webhookMessages } from './messages.js';

/** Whether an endpoint takes deliveries now: it has a URL and is enabled (else its deliveries are held or fail). */
export const takesDeliveries = (endpoint: { url?: string | null; enabled: boolean } | undefined): endpoint is { url: string; enabled: true } =>
  endpoint !== undefined && Boolean(endpoint.url) && endpoint.enabled;

/** Whether attempts to the endpoint can be made now: it takes deliveries, or it is an enabled listener (whose attempt then goes through the relay). */
export const takesAttempts = (endpoint: { url?: string | null; listener?: string | null; enabled: boolean } | undefined): boolean =>
  takesDeliveries(endpoint) || (endpoint !== undefined && typeof endpoint.listener === 'string' && endpoint.enabled);

/**
 * Why a due delivery cannot be attempted now, or undefined when it can: the default
 * endpoint holds it (paused) while it has no URL or is disabled, as it always has; to
 * another endpoint that was disabled or deleted meanwhile it fails (redeliverable).
 */
export function whyUnsendable(delivery: Delivery, endpoint: Endpoint | undefined): { status: 'paused' | 'failed'; reason: string } | undefined {
  if (delivery.endpoint_id === undefined) {
    if (takesDeliveries(endpoint)) return undefined;
    return { status: 'paused', reason: (endpoint && holdReason(endpoint)) ?? 'no webhook URL is set for this client' };
  }
  const id = delivery.endpoint_id;
  if (!endpoint) return { status: 'failed', reason: webhookMessages.endpointGone(id) };
  if (!endpoint.enabled) return { status: 'failed', reason: webhookMessages.endpointDisabled(id, endpoint.disabled_reason) };
  if (!endpoint.url && endpoint.listener === null) return { status: 'failed', reason: webhookMessages.noEndpointUrl(id) };
  return undefined;
}
