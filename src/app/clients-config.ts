import { createHmac } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { roleOf, type Client, type ClientConfig } from '../clients/index.js';
import { readConfigFile, type ResolvedOptions } from '../config/index.js';
import { mask } from '../shared/index.js';
import type { Storage } from '../store/index.js';

/** The clients of the config file, of `clients` and of `--token`, in that order. */
export function configuredClients(options: ResolvedOptions): ClientConfig[] {
  return [
    ...(options.config ? (readConfigFile(options.config).clients ?? []) : []),
    ...options.clients,
    ...options.tokens.filter((t) => t !== '').map((token) => ({ token })),
  ];
}

/** JSON with every object's keys in order, so that the same settings written in another order read alike. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));

/**
 * On a shared database every replica needs the same clients: one whose config differs
 * sends a partner's webhooks to another URL, signed with another secret, or fails the
 * jobs of a client it lacks, whichever replica runs them. At start, a replica compares a
 * digest of its clients (tokens, roles, settings and admin tokens, in any order) with the
 * one the replica that started last kept, warns when they differ, and keeps its own:
 * while a config change rolls out, each replica started with the new one says so once.
 * The digest is keyed with the store's own secret (`pod_secret`): the same clients give
 * another digest on another database, and the row holds no token.
 */
export async function compareClients(storage: Storage, configured: readonly ClientConfig[], adminTokens: readonly string[], secret: string, logger: Logger): Promise<void> {
  // An admin token is the same admin token whether a clients file names it (role: admin) or --admin-token does.
  const admins = [...adminTokens, ...configured.filter((c) => roleOf(c) === 'admin').map((c) => c.token)].sort();
  const clients = configured.filter((c) => roleOf(c) !== 'admin').map(canonical).sort();
  const hmac = createHmac('sha256', secret).update(canonical([clients, admins])).digest('hex');
  const kept = await storage.meta.get('clients_hmac');
  if (kept !== undefined && kept.hmac !== hmac) {
    logger.warn(
      { other_started_at: kept.at, other_host: kept.host },
      `the clients of this replica (--config, --token, SANDBOX_TOKENS, --admin-token) differ from those of the replica that started last, at ${kept.at}${kept.host === undefined ? '' : ` on host ${kept.host}`} (it may have stopped since): every replica of a shared database needs the same clients, or a partner's jobs and webhooks take the settings of whichever replica runs them (expected while a change of the config rolls out: start every replica with it)`,
    );
  }
  await storage.meta.set('clients_hmac', { hmac, at: new Date().toISOString(), host: hostname() });
}

/**
 * The token a sandbox generated for client `default` (kept in its store, printed at start)
 * names a client by its own hash once it is given back with `--token` (or in a clients file
 * entry without an id): that client sees none of `default`'s orders, and `default`'s due jobs
 * are dropped. A start configured so says how to keep it the default client; an entry that
 * names another id on purpose is left alone.
 */
export function generatedTokenGiven(generated: unknown, configured: readonly ClientConfig[], clients: readonly Pick<Client, 'token' | 'id'>[]): string | undefined {
  if (typeof generated !== 'string' || generated === '' || !configured.some((c) => c.token === generated && c.id === undefined)) return undefined;
  const given = clients.find((c) => c.token === generated && c.id !== 'default');
  if (!given) return undefined;
  return `the token ${mask(given.token)} is the one this store generated for client "default", but it is configured for client "${given.id}" (a token given with --token or SANDBOX_TOKENS, or in a clients file entry without an id, names a client of its own): that client sees none of default's orders, and default's due AWBs, tracking steps and webhook attempts are dropped. To keep it the default client, give it in a clients file as { token: <that token>, id: default } (docs/reference/configuration.md#tokens-and-clients)`;
}

/**
 * The quick start's client, left out of a start's clients while jobs of its are still
 * scheduled: on the embedded store they are dropped as they fall due, with a warning only
 * then (hours later on a real clock), so the start says it first. Not when the generated
 * token is configured at all: under another id on purpose (a clients file's entry), or
 * without one (`generatedTokenGiven` says that).
 */
export async function defaultLeftOut(storage: Pick<Storage, 'jobs' | 'orders'>, generated: unknown, clients: readonly Pick<Client, 'token' | 'id'>[]): Promise<string | undefined> {
  if (clients.some((c) => c.id === 'default')) return undefined;
  if (typeof generated !== 'string' || generated === '' || clients.some((c) => c.token === generated)) return undefined;
  const [pending, orders] = await Promise.all([storage.jobs.count('default'), storage.orders.count('default')]);
  if (pending === 0 && orders === 0) return undefined;
  const dropped = pending === 0 ? '' : `its ${pending} scheduled job${pending === 1 ? '' : 's'} (AWBs, tracking steps, webhook attempts) will be dropped as ${pending === 1 ? 'it falls' : 'they fall'} due, and `;
  return `client "default" (the token this store generated, ${mask(generated)}) is not configured on this start: ${dropped}no token of this start sees its ${orders} order${orders === 1 ? '' : 's'}. To keep it, give the token the quick start printed in a clients file as { token: <that token>, id: default } beside your others (docs/reference/configuration.md#tokens-and-clients)`;
}
