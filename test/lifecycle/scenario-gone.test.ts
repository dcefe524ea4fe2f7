import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../src/fixtures/index.js';
import { scenarioChanges } from '../../src/orders/index.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

const HOUR = 3_600_000;
const delivered = JSON.parse(readFileSync(join(FIXTURES_DIR, 'scenarios/delivered.json'), 'utf8')) as { steps: Array<Record<string, unknown>> } & Record<string, unknown>;
const step = (i: number, status: string | null) => ({ ...delivered.steps[1], key: `step_${i}`, at: `${i + 1}h`, note: `Scan ${i}`, status, pod: false });
/** A 3-step scenario of a tester's own, and the same cut to its first step. */
const threeSteps = { ...delivered, name: 'custom_one', magic_awb: 'SBXCUS00000099', steps: [step(0, '1'), step(1, null), step(2, null)] };
const oneStep = { ...threeSteps, steps: [step(0, '1')] };

describe('orders whose scenario was removed or shortened after they were made', () => {
  const dir = tempDir();
  /** A copy of the shipped fixtures with `scenario` as fixtures/scenarios/custom.json, or without it. */
  const fixtures = (scenario?: unknown): string => {
    const copy = join(dir(), 'fixtures');
    rmSync(copy, { recursive: true, force: true });
    cpSync(FIXTURES_DIR, copy, { recursive: true });
    if (scenario !== undefined) writeFileSync(join(copy, 'scenarios/custom.json'), JSON.stringify(scenario));
    return copy;
  };
  const create = async (sandbox: TestSandbox): Promise<string> =>
    (await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { 'X-Sandbox-Scenario': 'custom_one' } })).body.order_numbers[0];

  /** Three orders of custom_one: one at its end, one after its first step, one still waiting for its AWB. */
  async function made(): Promise<{ data: string; done: string; midway: string; waiting: string; awb: string }> {
    const data = join(dir(), 'sandbox.json');
    const first = await testSandbox({ data }, { fixturesDir: fixtures(threeSteps) });
    const told = () => scenarioChanges(first.services.storage, first.services.fixtures, first.services.registry.clientIds);
    expect(await told()).toEqual([]);
    const done = await create(first);
    await first.advance(60_000 + 3 * HOUR);
    const midway = await create(first);
    await first.advance(60_000 + HOUR);
    const waiting = await create(first);
    const { awb } = (await first.call('GET', `/__sandbox/orders/${done}`)).body;
    expect((await first.call('GET', `/v1/order/tracking/${awb}`)).body.history).toHaveLength(3);
    await first.close();
    return { data, done, midway, waiting, awb };
  }

  it('serve what they have when it was shortened: listings, reads and tracking answer, no step past its end is played or shown as due', async () => {
    const { data, done, midway, awb } = await made();
    const second = await testSandbox({ data }, { fixturesDir: fixtures(oneStep) });
    try {
      // The start told it (and kept the new length): a shortened scenario is told once, not at every start while it is in use.
      expect(await scenarioChanges(second.services.storage, second.services.fixtures, second.services.registry.clientIds)).toEqual([]);
      expect((await second.services.storage.meta.get('scenario_steps'))?.custom_one).toBe(1);
      const listing = await second.call('GET', '/__sandbox/orders');
      expect(listing.status).toBe(200);
      expect(listing.body.orders).toHaveLength(3);
      const order = (await second.call('GET', `/__sandbox/orders/${done}`)).body;
      expect(order.scenario).toBe('custom_one');
      expect(order.history.map((e: { note: string }) => e.note)).toEqual(['Scan', 'Scan', 'Scan 0']);
      expect(order.history[0].description).toBe('Step 3 of scenario custom_one, which its file no longer holds');
      const tracking = await second.call('GET', `/v1/order/tracking/${awb}`);
      expect(tracking.status).toBe(200);
      expect(tracking.body).toMatchObject({ last_status: '1' });
      expect(tracking.body.history).toHaveLength(3);
      // The midway order's next step is past the scenario's end: not due, not played.
      expect((await second.call('GET', `/__sandbox/orders/${midway}`)).body).toMatchObject({ next: null, upcoming: [] });
      await second.advance(10 * HOUR);
      expect((await second.call('GET', `/__sandbox/orders/${midway}`)).body.history).toHaveLength(1);
      const advanced = await second.call('POST', `/__sandbox/orders/${midway}/advance`, { body: {} });
      expect(advanced.status).toBe(409);
    } finally {
      await second.close();
    }
  });

  it('serve what they have when it was removed: answers name the scenario, a trigger or an advance is a 409 saying it is gone', async () => {
    const { data, done, midway, waiting, awb } = await made();
    const second = await testSandbox({ data }, { fixturesDir: fixtures() });
    try {
      expect(await scenarioChanges(second.services.storage, second.services.fixtures, second.services.registry.clientIds)).toEqual([
        expect.stringContaining('scenario custom_one is no longer among the scenarios (its file was removed), and 3 orders follow it: they keep their history so far and play no further step'),
      ]);
      const listing = await second.call('GET', '/__sandbox/orders');
      expect(listing.status).toBe(200);
      expect(listing.body.orders.map((o: { scenario: string }) => o.scenario)).toEqual(['custom_one', 'custom_one', 'custom_one']);
      expect((await second.call('GET', '/__sandbox/orders?scenario=custom_one')).body.orders).toHaveLength(3);
      const order = await second.call('GET', `/__sandbox/orders/${done}`);
      expect(order.status).toBe(200);
      expect(order.body).toMatchObject({ scenario: 'custom_one', next: null, upcoming: [] });
      expect(order.body.history).toHaveLength(3);
      // No entry left with a status: as before a first scan.
      expect((await second.call('GET', `/v1/order/tracking/${awb}`)).status).toBe(404);
      const gone = /scenario custom_one, which the sandbox's scenarios no longer hold/;
      const advanced = await second.call('POST', `/__sandbox/orders/${midway}/advance`, { body: {} });
      expect(advanced.status).toBe(409);
      expect(advanced.body.message).toMatch(gone);
      const triggered = await second.call('POST', '/__sandbox/events/trigger', { body: { event: 'tracking.step', order_no: midway, to_step: 2 } });
      expect(triggered.status).toBe(409);
      expect(triggered.body.message).toMatch(gone);
      // The waiting order still gets its AWB when due, with no step after it.
      await second.advance(10 * HOUR);
      const later = (await second.call('GET', `/__sandbox/orders/${waiting}`)).body;
      expect(later).toMatchObject({ status: 'awb_generated', next: null, history: [] });
      expect((await second.call('GET', `/__sandbox/orders/${midway}`)).body.history).toHaveLength(1);
      expect((await second.call('GET', '/__sandbox/report')).status).toBe(200);
      // A cancellation needs no scenario.
      const cancelled = await second.call('POST', '/__sandbox/events/trigger', { body: { event: 'order.cancelled', order_no: waiting } });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.order).toMatchObject({ status: 'cancelled', scenario: 'custom_one' });
    } finally {
      await second.close();
    }
  });
});
