import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ClientConfig } from '../clients/index.js';
import { readConfigFile, type ResolvedOptions } from '../config/index.js';
import type { Storage } from '../store/index.js';

/** The clients of the config file, of `clients` and of `--token`, in that order. */
export function configuredClients(options: ResolvedOptions): ClientConfig[] {
  return [
    ...(options.config ? (readConfigFile(options.config).clients ?? []) : []),
    ...options.clients,
    ...options.tokens.filter((t) => t !== '').map((token) => ({ token })),
  ];
}

/**
 * On a shared database every replica needs the same clients: one whose config differs
 * sends a partner's webhooks to another URL, signed with another secret, or fails the
 * jobs of a client it lacks, whichever replica runs them. At start, a replica compares a
 * digest of its clients (tokens, roles, settings and admin tokens; never kept as they are)
 * with the one the replica that started last kept, warns when they differ, and keeps its
 * own: while a config change rolls out, each replica started with the new one says so once.
 */
export async function compareClients(storage: Storage, configured: readonly ClientConfig[], adminTokens: readonly string[], logger: Logger): Promise<void> {
  const digest = createHash('sha256').update(JSON.stringify([configured, [...adminTokens].sort()])).digest('hex');
  const kept = await storage.meta.get('clients_config');
  if (kept !== undefined && kept.digest !== digest) {
    logger.warn(
      { other_started_at: kept.at },
      `the clients of this replica (--config, --token, SANDBOX_TOKENS, --admin-token) differ from those of the replica that started last, at ${kept.at}: every replica of a shared database needs the same clients, or a partner's jobs and webhooks take the settings of whichever replica runs them (expected while a change of the config rolls out: start every replica with it)`,
    );
  }
  await storage.meta.set('clients_config', { digest, at: new Date().toISOString() });
}
