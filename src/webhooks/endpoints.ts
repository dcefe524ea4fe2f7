import type { Client } from '../config/clients.js';
import type { ResolvedOptions } from '../config/options.js';
import type { Store } from '../store/store.js';
import { makeSecret } from './secret.js';
import type { ChaosMode } from './types.js';
import { chaosOf } from './chaos.js';

/** Runtime settings of a client's endpoint, set by `PUT /__sandbox/webhook` or a 410 Gone. */
export interface EndpointSetting {
  client_id: string;
  url?: string;
  secret?: string;
  chaos?: ChaosMode[];
  disabled_at: number | null;
  disabled_reason: string | null;
  updated_at: number;
}

/** Where a client's webhooks go, from the runtime setting, the config file or the CLI defaults. */
export interface Endpoint {
  client_id: string;
  url: string | null;
  secret: string;
  chaos: ChaosMode[];
  enabled: boolean;
  disabled_at: number | null;
  disabled_reason: string | null;
  /** Where the URL comes from. */
  source: 'runtime' | 'config' | 'default' | 'none';
}

export const ENDPOINTS = 'webhook_endpoints';
/** Generated secrets are kept apart from the settings, so a reset does not change them. */
export const SECRETS = 'webhook_secrets';

/**
 * Reads and changes the webhook endpoint of each client. A client with no secret
 * anywhere gets one generated and kept in the store, so it survives restarts.
 */
export class WebhookEndpoints {
  constructor(
    private readonly store: Store,
    private readonly options: Pick<ResolvedOptions, 'webhookUrl' | 'webhookSecret' | 'seed'>,
  ) {}

  of(client: Client): Endpoint {
    const setting = this.store.get<EndpointSetting>(ENDPOINTS, client.id);
    const configured = client.webhook ?? {};
    const url = setting?.url ?? configured.url ?? this.options.webhookUrl ?? null;
    const source = setting?.url ? 'runtime' : configured.url ? 'config' : this.options.webhookUrl ? 'default' : 'none';
    return {
      client_id: client.id,
      url,
      secret: setting?.secret ?? configured.secret ?? this.options.webhookSecret ?? this.generatedSecret(client.id),
      chaos: chaosOf(setting?.chaos ?? configured.chaos),
      enabled: !setting?.disabled_at,
      disabled_at: setting?.disabled_at ?? null,
      disabled_reason: setting?.disabled_reason ?? null,
      source,
    };
  }

  /** Sets the URL (and secret, chaos when given) and enables the endpoint again. */
  set(client: Client, change: { url: string; secret?: string; chaos?: ChaosMode[] }, at: number): Endpoint {
    const setting = this.setting(client.id, at);
    setting.url = change.url;
    if (change.secret !== undefined) setting.secret = change.secret;
    if (change.chaos !== undefined) setting.chaos = change.chaos;
    setting.disabled_at = null;
    setting.disabled_reason = null;
    this.store.put(ENDPOINTS, client.id, setting);
    return this.of(client);
  }

  /** Stops deliveries to the client until its endpoint is set again (after a 410 Gone). */
  disable(clientId: string, reason: string, at: number): void {
    const setting = this.setting(clientId, at);
    setting.disabled_at = at;
    setting.disabled_reason = reason;
    this.store.put(ENDPOINTS, clientId, setting);
  }

  /** Drops the client's runtime setting (reset); the generated secret stays. */
  remove(clientId: string): number {
    if (!this.store.get(ENDPOINTS, clientId)) return 0;
    this.store.delete(ENDPOINTS, clientId);
    return 1;
  }

  private setting(clientId: string, at: number): EndpointSetting {
    const existing = this.store.get<EndpointSetting>(ENDPOINTS, clientId);
    return existing ? { ...existing, updated_at: at } : { client_id: clientId, disabled_at: null, disabled_reason: null, updated_at: at };
  }

  private generatedSecret(clientId: string): string {
    let secret = this.store.get<string>(SECRETS, clientId);
    if (!secret) {
      secret = makeSecret(clientId, this.options.seed);
      this.store.put(SECRETS, clientId, secret);
    }
    return secret;
  }
}
