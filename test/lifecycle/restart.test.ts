import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/shared/duration.js';
import { loadFixtures } from '../../src/fixtures/load.js';
import { createRequest } from '../support/orders.js';
import { testSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

const START = Date.parse('2026-03-02T08:00:00Z');
const delivered = loadFixtures().scenarios.get('delivered')!;
const offset = (key: string) => parseDuration(delivered.steps.find((s) => s.key === key)!.at)!;

describe('a restart in the middle of a journey', () => {
  const dir = tempDir();

  it('resumes it: steps due while stopped appear with their scheduled timestamps, none twice', async () => {
    const data = join(dir(), 'sandbox.json');
    const first = await testSandbox({ data, clockStart: String(START), awbDelay: '1m' });
    const created = await first.call('POST', '/v1/order', { body: createRequest(1) });
    const orderNo: string = created.body.order_numbers[0];
    const awbAt = START + 60_000;
    await first.advance(60_000 + offset('origin_received'));
    const { awb } = (await first.call('GET', `/__sandbox/orders/${orderNo}`)).body;
    expect((await first.call('GET', `/v1/order/tracking/${awb}`)).body.history).toHaveLength(2);
    await first.close();

    // Stopped for a day: the manual clock of the next start is one day later.
    const second = await testSandbox({ data, clockStart: String(START + 60_000 + offset('origin_received') + 86_400_000), awbDelay: '1m' });
    const tracking = (await second.call('GET', `/v1/order/tracking/${awb}`)).body;
    const played = delivered.steps.filter((s) => parseDuration(s.at)! <= offset('origin_received') + 86_400_000);
    expect(tracking.history.map((e: { note: string }) => e.note)).toEqual(played.map((s) => s.note).reverse());
    expect(tracking.history.map((e: { update_on: number }) => e.update_on)).toEqual(
      played.map((s) => Math.floor((awbAt + parseDuration(s.at)!) / 1000)).reverse(),
    );
    await second.advance(3 * 86_400_000);
    const final = (await second.call('GET', `/v1/order/tracking/${awb}`)).body;
    expect(final.history).toHaveLength(delivered.steps.length);
    expect(new Set(final.history.map((e: { note: string; update_on: number }) => `${e.note}@${e.update_on}`)).size).toBe(delivered.steps.length);
    await second.close();
  });

  it('never reuses an order number after a restart on the same file', async () => {
    const data = join(dir(), 'numbers.json');
    const seen = new Set<string>();
    for (let run = 0; run < 3; run += 1) {
      const sandbox = await testSandbox({ data, seed: undefined });
      for (let i = 0; i < 5; i += 1) {
        const res = await sandbox.call('POST', '/v1/order', { body: createRequest(2) });
        for (const n of res.body.order_numbers) {
          expect(seen.has(n)).toBe(false);
          seen.add(n);
        }
      }
      await sandbox.close();
    }
    expect(seen.size).toBe(30);
  });
});

describe('--seed', () => {
  it('makes order numbers, batch ids and AWBs reproducible', async () => {
    const run = async () => {
      const sandbox = await testSandbox({ seed: 'fixed' });
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(2) });
      await sandbox.advance(60_000);
      const state = (await sandbox.call('GET', `/__sandbox/orders/${res.body.order_numbers[0]}`)).body;
      await sandbox.close();
      return [res.body.batch_id, ...res.body.order_numbers, state.awb];
    };
    expect(await run()).toEqual(await run());
  });
});
