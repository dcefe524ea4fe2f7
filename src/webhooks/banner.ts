import type { Client } from '../clients/index.js';
import type { WebhookEndpoints } from './endpoints.js';

/**
 * The start banner's line for a client's webhook: where it goes and how to get the
 * secret. A secret is printed only when the sandbox generated it and the sandbox is
 * not shared (`showGenerated`: one client, no admin token); configured secrets and
 * secrets set through the API never are (stdout ends up in `docker logs`).
 *
 * @example await webhookBannerLine(endpoints, client, true) // '  webhook: http://localhost:3000/hook  secret: whsec_...  (client default)'
 */
export async function webhookBannerLine(endpoints: WebhookEndpoints, client: Client, showGenerated: boolean): Promise<string> {
  const endpoint = await endpoints.of(client);
  const url = endpoint.url ?? 'none (set one with PUT /__sandbox/webhook)';
  const secret =
    endpoint.secret_source !== 'generated' ? `${endpoint.secret_source === 'runtime' ? 'set through the API' : 'configured'} (not shown)`
    : showGenerated ? endpoint.secret
    : 'generated once, kept in the store (the client reads it with GET /__sandbox/webhook)';
  return `  webhook: ${url}${endpoint.enabled ? '' : ' (disabled)'}  secret: ${secret}  (client ${client.id})`;
}
