import { createHash, timingSafeEqual } from 'node:crypto';

/** Per-client settings, from the `--config` file or `createSandbox({ clients })`. */
export interface ClientConfig {
  token: string;
  /** Stable id that owns the client's records; derived from the token when absent. */
  id?: string;
  name?: string;
  /** Couriers this client may use; all when absent. Others answer 403. */
  couriers?: string[];
  /** A read-only client may track and read but not create or change: 403. */
  read_only?: boolean;
  /** Default scenario of this client's orders. */
  scenario?: string;
  /** AWB delay of this client's orders, e.g. "500ms" or "2s-10s". */
  awb_delay?: string;
  webhook?: { url?: string; secret?: string; chaos?: string[] };
}

/** A client (tenant) as the sandbox knows it at run time. */
export interface Client extends ClientConfig {
  id: string;
  name: string;
}

const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/** The id a token's records belong to when the configuration gives none. */
export const clientIdOf = (token: string): string => `client_${digest(token).toString('hex').slice(0, 12)}`;

/**
 * Finds the client of a bearer token. Tokens are compared by their SHA-256 digests
 * with a constant-time comparison, so response times do not reveal a token.
 */
export class ClientRegistry {
  private readonly entries: Array<{ digest: Buffer; client: Client }>;

  constructor(configs: ClientConfig[]) {
    const seen = new Set<string>();
    this.entries = configs.map((config) => {
      if (!config.token) throw new Error('Every client needs a non-empty token.');
      if (seen.has(config.token)) throw new Error('The same token is configured twice.');
      seen.add(config.token);
      const id = config.id ?? clientIdOf(config.token);
      // Records belong to the id, not the token: tokens that share an id (a read-only key
      // beside a full one, a rotated token) see the same records, as one client.
      return { digest: digest(config.token), client: { ...config, id, name: config.name ?? id } };
    });
  }

  get clients(): Client[] {
    return this.entries.map((e) => e.client);
  }

  byToken(token: string): Client | undefined {
    const wanted = digest(token);
    let found: Client | undefined;
    for (const entry of this.entries) if (timingSafeEqual(entry.digest, wanted)) found = entry.client;
    return found;
  }

  byId(id: string): Client | undefined {
    return this.entries.find((e) => e.client.id === id)?.client;
  }
}
