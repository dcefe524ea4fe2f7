import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

const TRACK = '/v1/order/tracking/SBXNOSUCH01';
const HOUR = 3_600_000;
const urls = Array.from({ length: 20 }, (_, i) => `http://127.0.0.1:9/hook-${i}`);

/**
 * A client's webhook endpoint, fault rules and clock are kept in one settings row; on
 * PostgreSQL each write of it checks the version it read, so writes that met answered
 * 409, which the provider never sends.
 */
describe("a client's settings changed by many requests at once", () => {
  it('answers PUT /__sandbox/webhook, rule-matching requests and clock advances without a 409, and keeps every change (on every store)', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder' }, action: { type: 'status', status: 400 }, times: 1000 } });
    const before = (await sandbox.call('GET', '/__sandbox/clock')).body.now_ms as number;

    const answers = await Promise.all([
      ...Array.from({ length: 50 }, () => sandbox.call('GET', TRACK)),
      ...urls.map((url) => sandbox.call('PUT', '/__sandbox/webhook', { body: { url } })),
      ...Array.from({ length: 5 }, () => sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: HOUR } })),
    ]);

    const statuses = answers.map((r) => r.status);
    expect(statuses.slice(0, 50)).toEqual(Array(50).fill(400));
    expect(statuses.slice(50, 70)).toEqual(Array(20).fill(200));
    expect(statuses.slice(70)).toEqual(Array(5).fill(200));
    const [rule] = (await sandbox.call('GET', '/__sandbox/faults')).body.rules;
    expect(rule).toMatchObject({ matched: 50, hits: 50, remaining: 950 });
    const endpoint = (await sandbox.call('GET', '/__sandbox/webhook')).body;
    expect(urls).toContain(endpoint.url);
    expect(endpoint.enabled).toBe(true);
    expect((await sandbox.call('GET', '/__sandbox/clock')).body.now_ms).toBe(before + 5 * HOUR);
    // The clock as the settings row keeps it: what a restart resumes from.
    expect((await sandbox.services.storage.settings.get('client-a'))?.clock?.now_ms).toBe(before + 5 * HOUR);
  });
});
