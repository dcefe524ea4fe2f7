import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_B } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

/** Copies the data file and its journal segments as they are now into `to`. */
function copyFiles(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from).filter((n) => n.startsWith('sandbox.json') && !n.endsWith('.lock'))) copyFileSync(join(from, name), join(to, name));
}

// The field checks of the data file's records (record-fields.ts) must take every record this
// build writes, in the data file and in the journal: a refused start on a file the sandbox wrote
// itself would lose a partner's sandbox.
describe('a data file and journal this build wrote, with records of every kind', () => {
  const dir = tempDir();

  it('start again, from the journal and from the checkpointed file, with every record read back', async () => {
    const data = join(dir(), 'sandbox.json');
    const sandbox = await testSandbox({ data });
    const setUp = [
      await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: 'http://127.0.0.1:9/hook' } }),
      await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/second', description: 'second' } }),
      await sandbox.call('POST', '/__sandbox/faults', { body: { match: { method: 'GET', headers: { 'x-never': 'sent' } }, action: { type: 'status', status: 500 }, times: 5, probability: 0.5 } }),
    ];
    expect(setUp.map((r) => r.status < 300)).toEqual([true, true, true]);
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(3) });
    expect(created.status).toBe(201);
    const [first, second, third] = created.body.order_numbers as string[];
    await sandbox.call('POST', `/__sandbox/orders/${first}/awb`);
    await sandbox.call('POST', `/__sandbox/orders/${first}/advance`);
    await sandbox.call('POST', `/__sandbox/orders/${first}/advance`);
    await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: second } });
    await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 120_000 } });
    await sandbox.call('POST', '/__sandbox/clock/advance', { token: TOKEN_B, body: { ms: 60_000 } });
    await sandbox.call('POST', '/v1/order', { token: TOKEN_B, body: createRequest(1) });
    await sandbox.advance(3_600_000);
    const deliveries = (await sandbox.call('GET', '/__sandbox/webhooks/deliveries')).body;
    const orders = await Promise.all([first, second, third].map(async (n) => (await sandbox.call('GET', `/__sandbox/orders/${n}`)).body));
    // The journal as it stands while the sandbox runs (its last checkpoint and every line after it).
    copyFiles(dir(), join(dir(), 'journal'));
    const journal = readdirSync(join(dir(), 'journal')).filter((n) => n.includes('.wal.'));
    expect(journal.map((n) => readFileSync(join(dir(), 'journal', n), 'utf8')).join('')).toMatch(/"p":\{/);
    await sandbox.close();

    for (const folder of [join(dir(), 'journal'), dir()]) {
      const storage = await EmbeddedStorage.open({ path: join(folder, 'sandbox.json'), requestLogSize: 10 });
      await storage.close();
      const again = await testSandbox({ data: join(folder, 'sandbox.json') });
      expect((await again.call('GET', '/__sandbox/webhooks/deliveries')).body).toEqual(deliveries);
      expect(await Promise.all([first, second, third].map(async (n) => (await again.call('GET', `/__sandbox/orders/${n}`)).body))).toEqual(orders);
      expect((await again.call('GET', '/__sandbox/faults')).body.rules).toHaveLength(1);
      await again.close();
    }
    // Opened without the store's formats (as a tool reading the file does), the played steps are the file's numbers: taken too.
    expect(readFileSync(data, 'utf8')).toMatch(/"history":\[\d/);
    const bare = await JournaledFile.open({ path: data });
    expect(bare.count('orders')).toBe(4);
    await bare.close();
    // What the files held: deliveries with attempts, an order with played steps, a cancelled one.
    expect((deliveries.deliveries as Array<{ attempts: unknown[] }>).some((d) => d.attempts.length > 0)).toBe(true);
    expect(orders.map((o: { status: string }) => o.status)).toEqual(['in_transit', 'cancelled', 'awb_generated']);
  });
});
