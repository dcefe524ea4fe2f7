import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { compareClients } from '../../src/app/clients-config.js';
import type { ClientConfig } from '../../src/clients/index.js';
import type { Storage } from '../../src/store/index.js';

/** A shared database's meta table, as far as the comparison of clients reads and writes it. */
function sharedMeta() {
  const rows = new Map<string, unknown>();
  return { meta: { get: async (key: string) => rows.get(key), set: async (key: string, value: unknown) => void rows.set(key, value) } } as unknown as Storage;
}

/** A replica starting on `storage` with `clients`: the warnings it logs. */
async function start(storage: Storage, clients: ClientConfig[], adminTokens: string[] = []): Promise<string[]> {
  const warnings: string[] = [];
  const logger = { warn: (_fields: object, message: string) => warnings.push(message) } as unknown as Logger;
  await compareClients(storage, clients, adminTokens, 'pod-secret', logger);
  return warnings;
}

const partner: ClientConfig = { token: 'partner-a', id: 'a', couriers: ['jne', 'sicepat', 'anteraja'], webhook: { url: 'http://127.0.0.1:9/hook', chaos: ['duplicate', 'reorder'] } };

describe('the clients of replicas on one database', () => {
  it('agree whatever the order of the clients, of their settings and of their lists', async () => {
    const storage = sharedMeta();
    expect(await start(storage, [partner, { token: 'partner-b' }], ['admin'])).toEqual([]);
    const reordered: ClientConfig = { webhook: { chaos: ['reorder', 'duplicate'], url: 'http://127.0.0.1:9/hook' }, couriers: ['anteraja', 'jne', 'sicepat'], id: 'a', token: 'partner-a' };
    expect(await start(storage, [{ token: 'partner-b' }, reordered], ['admin'])).toEqual([]);
  });

  it('differ, with a warning, when a client may use another courier', async () => {
    const storage = sharedMeta();
    await start(storage, [partner]);
    const [warning] = await start(storage, [{ ...partner, couriers: ['jne', 'sicepat'] }]);
    expect(warning).toMatch(/the clients of this replica .* differ from those of the replica that started last/);
    expect(warning).not.toContain('partner-a');
  });
});
