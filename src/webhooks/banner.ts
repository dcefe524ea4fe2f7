import type { Client } from '../config/clients.js';
import type { Services } from '../services.js';
import { WebhookEndpoints } from './endpoints.js';

/**
 * The start banner's line for a client's webhook: where it goes and the secret to
 * verify it with.
 *
 * @example webhookBannerLine(services, client) // '  webhook: http://localhost:3000/hook  secret: whsec_...'
 */
export function webhookBannerLine(services: Services, client: Client): string {
  const endpoint = new WebhookEndpoints(services.store, services.options).of(client);
  const url = endpoint.url ?? 'none (set one with PUT /__sandbox/webhook)';
  return `  webhook: ${url}${endpoint.enabled ? '' : ' (disabled)'}  secret: ${endpoint.secret}`;
}
