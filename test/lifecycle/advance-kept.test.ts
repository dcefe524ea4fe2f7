import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox } from '../support/sandbox.js';
import { onPostgres } from '../support/store-kind.js';
import { tempDir } from '../support/tmp.js';

// A shared store keeps the clocks where every replica adopts them; this is the data file's guarantee.
describe.skipIf(onPostgres)('an advance killed in the middle', () => {
  const dir = tempDir();

  it('restarts at its target, never behind what it already recorded and sent, and runs what was left due', async () => {
    const data = join(dir(), 'sandbox.json');
    const first = await testSandbox({ data, awbDelay: '1m' });
    const created = await first.call('POST', '/v1/order', { body: createRequest(1) });
    const orderNo = created.body.order_numbers[0] as string;
    const before = Date.parse((await first.call('GET', '/__sandbox/clock')).body.now as string);
    // The advance's due work never ends: as if the process died while it ran.
    const advance = vi.spyOn(first.services.scheduler, 'advance').mockImplementation(() => new Promise<void>(() => undefined));
    void first.services.clockService.advance('client-a', 5 * 60_000);
    await vi.waitFor(async () => expect((await first.services.storage.settings.get('client-a'))?.clock?.now_ms).toBe(before + 5 * 60_000), { timeout: 10_000 });
    advance.mockRestore();
    await first.close();

    const second = await testSandbox({ data, awbDelay: '1m' });
    expect(Date.parse((await second.call('GET', '/__sandbox/clock')).body.now as string)).toBe(before + 5 * 60_000);
    // The AWB that fell due on the way was not made before the stop: it is made at the start.
    expect((await second.call('GET', `/__sandbox/orders/${orderNo}`)).body.awb).toMatch(/^\w+/);
    await second.close();
  });
});
