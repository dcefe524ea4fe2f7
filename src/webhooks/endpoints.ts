import type { Client } from '../config/clients.js';
import type { ResolvedOptions } from '../config/options.js';
import type { ClientSettings, EndpointSetting, Repositories, Storage, Stored } from '../store/port.js';
import { chaosOf } from './chaos.js';
import { makeSecret } from './secret.js';
import type { ChaosMode } from './types.js';

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

/** A client's settings as they are before anything is kept for it. */
export const emptySettings = (clientId: string): ClientSettings => ({ client_id: clientId, webhook: null, generated_secret: null, faults: [], fault_seq: 0 });

/**
 * Reads and changes the webhook endpoint of each client (kept in its settings). A
 * client with no secret anywhere gets one generated and kept, so it survives restarts
 * and resets.
 */
export class WebhookEndpoints {
  constructor(
    private readonly storage: Storage,
    private readonly options: Pick<ResolvedOptions, 'webhookUrl' | 'webhookSecret' | 'seed'>,
  ) {}

  /** The client's endpoint as it stands. */
  async of(client: Client, tx: Repositories = this.storage): Promise<Endpoint> {
    const settings = await tx.settings.get(client.id);
    const setting = settings?.webhook ?? undefined;
    const configured = client.webhook ?? {};
    const url = setting?.url ?? configured.url ?? this.options.webhookUrl ?? null;
    const source = setting?.url ? 'runtime' : configured.url ? 'config' : this.options.webhookUrl ? 'default' : 'none';
    return {
      client_id: client.id,
      url,
      secret: setting?.secret ?? configured.secret ?? this.options.webhookSecret ?? settings?.generated_secret ?? makeSecret(client.id, this.options.seed),
      chaos: chaosOf(setting?.chaos ?? configured.chaos),
      enabled: !setting?.disabled_at,
      disabled_at: setting?.disabled_at ?? null,
      disabled_reason: setting?.disabled_reason ?? null,
      source,
    };
  }

  /** Keeps a generated secret for a client that has none configured (at start), so it never changes. */
  async ensureSecret(client: Client): Promise<void> {
    if (client.webhook?.secret !== undefined || this.options.webhookSecret !== undefined) return;
    await this.storage.transaction(async (tx) => {
      const settings = await tx.settings.get(client.id);
      if (settings?.generated_secret) return;
      await tx.settings.put({ ...(settings ?? emptySettings(client.id)), generated_secret: makeSecret(client.id, this.options.seed) });
    });
  }

  /** Sets the URL (and secret, chaos when given) and enables the endpoint again. */
  async set(client: Client, change: { url: string; secret?: string; chaos?: ChaosMode[] }, at: number, tx: Repositories): Promise<Endpoint> {
    await this.change(tx, client.id, at, (setting) => ({
      ...setting,
      url: change.url,
      ...(change.secret !== undefined ? { secret: change.secret } : {}),
      ...(change.chaos !== undefined ? { chaos: change.chaos } : {}),
      disabled_at: null,
      disabled_reason: null,
    }));
    return this.of(client, tx);
  }

  /** Stops deliveries to the client until its endpoint is set again (after a 410 Gone). */
  async disable(tx: Repositories, clientId: string, reason: string, at: number): Promise<void> {
    await this.change(tx, clientId, at, (setting) => ({ ...setting, disabled_at: at, disabled_reason: reason }));
  }

  /** Drops the client's runtime setting (reset); the generated secret stays. */
  async remove(clientId: string): Promise<number> {
    return this.storage.transaction(async (tx) => {
      const settings = await tx.settings.get(clientId);
      if (!settings?.webhook) return 0;
      await tx.settings.put({ ...settings, webhook: null });
      return 1;
    });
  }

  private async change(tx: Repositories, clientId: string, at: number, edit: (setting: EndpointSetting) => EndpointSetting): Promise<Stored<ClientSettings>> {
    const settings = await tx.settings.get(clientId);
    const setting = settings?.webhook ?? { disabled_at: null, disabled_reason: null, updated_at: at };
    return tx.settings.put({ ...(settings ?? emptySettings(clientId)), webhook: { ...edit(setting), updated_at: at } });
  }
}
