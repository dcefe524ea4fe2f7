import type { Client } from '../config/clients.js';
import type { WebhookEndpoints } from './endpoints.js';

/**
 * The start banner's line for a client's webhook: where it goes and the secret to
 * verify it with.
 *
 * @example await webhookBannerLine(endpoints, client) // '  webhook: http://localhost:3000/hook  secret: whsec_...'
 */
export async function webhookBannerLine(endpoints: WebhookEndpoints, client: Client): Promise<string> {
  const endpoint = await endpoints.of(client);
  const url = endpoint.url ?? 'none (set one with PUT /__sandbox/webhook)';
  return `  webhook: ${url}${endpoint.enabled ? '' : ' (disabled)'}  secret: ${endpoint.secret}`;
}
