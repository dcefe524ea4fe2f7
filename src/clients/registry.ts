import { hash, timingSafeEqual } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { headerText, isUsableToken, parseDelayRange, TOKEN_IN_VALUE_MIN } from '../shared/index.js';

/**
 * What a token may do. `partner`: everything on its own client's data. `read_only`: only
 * read it (every operation but GET and HEAD answers 403). `admin`: not a client of its
 * own; acts for any client named by `X-Sandbox-Client` and does the sandbox-wide
 * operations (listing clients, a sandbox-wide reset, metrics).
 */
export type Role = 'admin' | 'partner' | 'read_only';
export const ROLES: readonly Role[] = ['admin', 'partner', 'read_only'];

/** Per-client settings, from the `--config` file or `createSandbox({ clients })`. */
export interface ClientConfig {
  token: string;
  /** Stable id that owns the client's records; derived from the token when absent. */
  id?: string;
  name?: string;
  /** Couriers this client may use; all when absent. Others answer 403. */
  couriers?: string[];
  /** `partner` (the default) or `read_only`; `admin` makes the entry an admin token, not a client. */
  role?: Role;
  /** Older spelling of `role: read_only`, still read: `true` means the read_only role. */
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
  role: 'partner' | 'read_only';
}

/** Who a bearer token is: a client's token, or an admin token (no client of its own). */
export type Caller = { role: 'admin'; client?: undefined } | { role: Client['role']; client: Client };

/** A configured client (or admin) as an operator reads it in a refused start. */
const configuredAs = (config: ClientConfig): string => {
  if (roleOf(config) === 'admin' && config.id === undefined) return 'an admin token';
  const named = config.id ?? config.name;
  return named === undefined ? 'a client named by its token alone' : `client "${named}"`;
};

/** The role of a config entry: `role`, else `read_only: true` (older configs), else partner. */
export const roleOf = (config: ClientConfig): Role => config.role ?? (config.read_only === true ? 'read_only' : 'partner');

/**
 * The settings of a client's records rather than of one of its tokens: tokens that share an
 * id share them (an entry that leaves one out has the other's), and may not set them apart.
 */
const CLIENT_SETTINGS = ['scenario', 'awb_delay', 'webhook'] as const;

/** A client setting as tokens are compared by it: a webhook's keys in any order, a key set to nothing (null, "", an empty list) as none, a delay by its length. */
function settingValue(key: (typeof CLIENT_SETTINGS)[number], value: unknown): unknown {
  if (key === 'awb_delay' && typeof value === 'string') return parseDelayRange(value) ?? value;
  if (key !== 'webhook' || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0)));
}

/**
 * The entries of `configs` with each id's client settings on every one of its tokens. They
 * are its partner tokens' (its read_only tokens' when it has none); throws when two of those
 * set one differently, or a read_only token sets one its partner tokens do not have.
 */
/** Whether an entry sets a client setting: a webhook left with nothing in it (`url: ""`, an empty chaos list) sets none. */
function sets(key: (typeof CLIENT_SETTINGS)[number], value: unknown): boolean {
  const normal = settingValue(key, value);
  return normal !== undefined && normal !== null && !(key === 'webhook' && typeof normal === 'object' && Object.keys(normal).length === 0);
}

function withSharedSettings(configs: ClientConfig[]): ClientConfig[] {
  const byId = new Map<string, ClientConfig[]>();
  for (const config of configs) {
    if (roleOf(config) === 'admin' || config.id === undefined) continue;
    byId.set(config.id, [...(byId.get(config.id) ?? []), config]);
  }
  const shared = new Map<string, Partial<ClientConfig>>();
  for (const [id, entries] of byId) {
    const partners = entries.filter((entry) => roleOf(entry) === 'partner');
    const owners = partners.length > 0 ? partners : entries;
    const settings: Partial<Record<(typeof CLIENT_SETTINGS)[number], unknown>> = {};
    for (const key of CLIENT_SETTINGS) {
      const value = owners.find((entry) => sets(key, entry[key]))?.[key];
      for (const entry of entries) {
        if (!sets(key, entry[key]) || isDeepStrictEqual(settingValue(key, entry[key]), settingValue(key, value))) continue;
        throw new Error(
          value === undefined
            ? `A read_only token of client "${id}" sets ${key}, which its partner token does not: set it on the partner token (a client's settings hold for each of its tokens; on a read_only token alone it reached neither its orders nor its webhooks).`
            : `The tokens of client "${id}" set ${key} differently: it is the client's (its records belong to the id), so set it on one of its tokens, or the same on each.`,
        );
      }
      if (value !== undefined) settings[key] = value;
    }
    shared.set(id, settings as Partial<ClientConfig>);
  }
  return configs.map((config) => {
    const settings = config.id === undefined ? undefined : shared.get(config.id);
    if (!settings) return config;
    const filled: ClientConfig = { ...config };
    for (const key of CLIENT_SETTINGS) if (filled[key] === undefined && settings[key] !== undefined) Object.assign(filled, { [key]: settings[key] });
    return filled;
  });
}

// One-shot hashing: no Hash object to build for each request's token.
const digest = (token: string): Buffer => hash('sha256', token, 'buffer');

/** The id a token's records belong to when the configuration gives none. */
export const clientIdOf = (token: string): string => `client_${digest(token).toString('hex').slice(0, 12)}`;

/**
 * Finds the client of a bearer token. Tokens are compared by their SHA-256 digests
 * with a constant-time comparison, so response times do not reveal a token.
 */
export class ClientRegistry {
  private readonly entries: Array<{ digest: Buffer; caller: Caller }>;
  /** The admin tokens, for the start banner (masked there). */
  readonly adminTokens: string[] = [];
  /** Each client's name, as its first token configures it, by id. */
  private readonly names = new Map<string, string>();
  /** secretsOf's answers: by client id for partner and admin callers, by token for read-only ones (all configured, so bounded). */
  private readonly secrets = { partner: new Map<string, readonly string[]>(), admin: new Map<string, readonly string[]>(), own: new Map<string, readonly string[]>() };

  /** `configs` with `role: admin` and `adminTokens` are admin tokens; every other entry is a client's token. */
  constructor(configs: ClientConfig[], adminTokens: string[] = []) {
    const seen = new Map<string, ClientConfig>();
    const all = [...withSharedSettings(configs), ...adminTokens.map((token): ClientConfig => ({ token, role: 'admin' }))];
    this.entries = all.map((config) => {
      if (!config.token) throw new Error('Every client needs a non-empty token.');
      if (!isUsableToken(config.token)) {
        throw new Error(`The token of ${configuredAs(config)} would never authenticate: a token is visible text without spaces, in characters of one byte (ASCII is safest), as a client sends it in "Authorization: Bearer <token>".`);
      }
      const first = seen.get(config.token);
      if (first) throw new Error(
          `The same token is configured twice, ${configuredAs(first) === configuredAs(config) ? `both times for ${configuredAs(config)}` : `for ${configuredAs(first)} and for ${configuredAs(config)}`}: give each its own, or name it once (tokens come from --token / SANDBOX_TOKENS, the clients of --config / SANDBOX_CONFIG, --admin-token / SANDBOX_ADMIN_TOKEN, and, for client "default" when none is configured, the data file's generated sbx_ token).`,
        );
      seen.set(config.token, config);
      const role = roleOf(config);
      if (role === 'admin') {
        this.adminTokens.push(config.token);
        return { digest: digest(config.token), caller: { role } };
      }
      const id = config.id ?? clientIdOf(config.token);
      // Records belong to the id, not the token: tokens that share an id (a read-only key
      // beside a full one, a rotated token) see the same records, as one client.
      return { digest: digest(config.token), caller: { role, client: { ...config, id, name: config.name ?? id, role, read_only: role === 'read_only' } } };
    });
    for (const client of this.clients) if (!this.names.has(client.id)) this.names.set(client.id, client.name);
  }

  /** A client's name: its first token's, whichever of its tokens asks (tokens of one id may name it differently). */
  nameOf(id: string): string | undefined {
    return this.names.get(id);
  }

  /** Every client token (admin tokens are not clients). Tokens that share an id are listed each. */
  get clients(): Client[] {
    return this.entries.flatMap((e) => (e.caller.client ? [e.caller.client] : []));
  }

  /** The distinct client ids, in configuration order. */
  get clientIds(): string[] {
    return [...new Set(this.clients.map((c) => c.id))];
  }

  get hasAdmin(): boolean {
    return this.entries.some((e) => e.caller.role === 'admin');
  }

  /**
   * The tokens an answer to client `id` hides wherever they appear (a header of the
   * client's own, a query parameter, a fault rule's criterion), as a caller of `role` may
   * hide them: what it hides tells it a value holds one, so a caller hides only tokens it
   * may hold anyway. A read-only token: itself (`own`); a partner token: the client's
   * tokens (its read-only token may not read them); an admin token: those and every admin's.
   * Those of TOKEN_IN_VALUE_MIN characters or more: a shorter one would match ordinary text;
   * each also as read in UTF-8 where it differs (see asSent).
   */
  secretsOf(id: string, role: Role | undefined, own?: string): readonly string[] {
    if (role !== 'partner' && role !== 'admin') {
      if (own === undefined || own.length < TOKEN_IN_VALUE_MIN) return [];
      let mine = this.secrets.own.get(own);
      if (mine === undefined) this.secrets.own.set(own, (mine = asSent([own])));
      return mine;
    }
    const cache = this.secrets[role];
    let secrets = cache.get(id);
    if (secrets === undefined) {
      const tokens = this.clients.filter((c) => c.id === id).map((c) => c.token);
      secrets = asSent((role === 'admin' ? [...tokens, ...this.adminTokens] : tokens).filter((t) => t.length >= TOKEN_IN_VALUE_MIN));
      cache.set(id, secrets);
    }
    return secrets;
  }

  private everyTokenList: readonly string[] | undefined;

  /** Every token the sandbox knows, its clients' and the admins', of TOKEN_IN_VALUE_MIN characters or more: what the operator's log hides in a request it could not tell the client of. */
  everyToken(): readonly string[] {
    this.everyTokenList ??= asSent([...this.clients.map((c) => c.token), ...this.adminTokens].filter((t) => t.length >= TOKEN_IN_VALUE_MIN));
    return this.everyTokenList;
  }

  /** The client of a token; undefined for an unknown or an admin token. */
  byToken(token: string): Client | undefined {
    return this.callerOf(token)?.client;
  }

  /** Who a token is, admins included. */
  callerOf(token: string): Caller | undefined {
    const wanted = digest(token);
    let found: Caller | undefined;
    for (const entry of this.entries) if (timingSafeEqual(entry.digest, wanted)) found = entry.caller;
    return found;
  }

  /**
   * The client records of an id belong to, as an admin acting for it sees it: its
   * first full (partner) token's settings, else its first token's.
   */
  byId(id: string): Client | undefined {
    const tokens = this.clients.filter((c) => c.id === id);
    return tokens.find((c) => c.role === 'partner') ?? tokens[0];
  }
}

/**
 * Tokens as they may appear in what the sandbox shows: each as written, and also as the
 * UTF-8 text its bytes spell where that differs (`tokÃ©n` is the Latin-1 reading of
 * `tokén`'s bytes, see headerText). A client sends a token's bytes, and Authorization is
 * compared byte for byte, but every other header and every body is read as UTF-8: the token
 * sent there reads as that text, which must be hidden too.
 */
function asSent(tokens: readonly string[]): string[] {
  const forms = [...tokens];
  for (const token of tokens) {
    const read = headerText(token);
    if (read !== token) forms.push(read);
  }
  return forms;
}
