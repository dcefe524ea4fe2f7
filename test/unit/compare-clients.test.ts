import { hostname } from 'node:os';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { compareClients } from '../../src/app/clients-config.js';
import type { ClientConfig } from '../../src/clients/index.js';
import type { Storage } from '../../src/store/index.js';

/** A store's meta rows, as far as compareClients reads and writes them. */
function metaStore(): Storage {
  const rows = new Map<string, unknown>();
  return { meta: { get: async (key: string) => rows.get(key), set: async (key: string, value: unknown) => void rows.set(key, value) } } as unknown as Storage;
}

/** Starts "a replica" with these clients on `storage`; answers whether it warned that the clients differ. */
async function warns(storage: Storage, configured: ClientConfig[], adminTokens: string[]): Promise<boolean> {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  await compareClients(storage, configured, adminTokens, 'pod-secret', logger);
  return lines.some((line) => line.includes('differ from those of the replica that started last'));
}

describe('compareClients: the clients of replicas on one database', () => {
  it('takes an admin token named in a clients file (role: admin) for the same as --admin-token, and another admin token for a change', async () => {
    const storage = metaStore();
    expect(await warns(storage, [{ token: 'partner-token-one' }], ['ops-admin-token'])).toBe(false);
    expect(await warns(storage, [{ token: 'partner-token-one' }, { token: 'ops-admin-token', role: 'admin', name: 'Operations' }], [])).toBe(false);
    expect(await warns(storage, [{ token: 'partner-token-one' }], ['another-admin-token'])).toBe(true);
  });

  it("names the host and start time of the replica whose clients differ, which may have stopped since", async () => {
    const storage = metaStore();
    await warns(storage, [{ token: 'partner-token-one' }], []);
    const lines: string[] = [];
    await compareClients(storage, [{ token: 'partner-token-two' }], [], 'pod-secret', pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }));
    const warning = JSON.parse(lines[0]!) as { msg: string; other_host: string; other_started_at: string };
    expect(warning.other_host).toBe(hostname());
    expect(warning.msg).toContain(`that started last, at ${warning.other_started_at} on host ${hostname()} (it may have stopped since)`);
    // A row a replica of an older version kept names no host.
    await storage.meta.set('clients_hmac', { hmac: 'another', at: '2026-12-01T00:00:00.000Z' });
    lines.length = 0;
    await compareClients(storage, [{ token: 'partner-token-two' }], [], 'pod-secret', pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }));
    expect(lines[0]).toContain('that started last, at 2026-12-01T00:00:00.000Z (it may have stopped since)');
  });

  it('warns of a partner token that changed', async () => {
    const storage = metaStore();
    expect(await warns(storage, [{ token: 'partner-token-one', scenario: 'delivered' }], [])).toBe(false);
    expect(await warns(storage, [{ token: 'partner-token-one', scenario: 'returned' }], [])).toBe(true);
  });
});
