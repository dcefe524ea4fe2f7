import { afterEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/** An admin reads client-a's report: the admins' allowance, so the client's own stays for its requests. */
const ADMIN = 'report-429-admin-token';

const create = (s: TestSandbox, code: string) => {
  const request = createRequest(1);
  request.items[0]!.order_code = code;
  return s.call('POST', '/v1/order', { body: request });
};

/** The report's items by id: one read, as the admins' allowance is one request a second too. */
async function items(s: TestSandbox): Promise<Record<string, { status: string; detail: string }>> {
  const report = (await s.call('GET', '/__sandbox/report', { token: ADMIN, headers: { 'X-Sandbox-Client': 'client-a' } })).body as { items: Array<{ id: string; status: string; detail: string }> };
  return Object.fromEntries(report.items.map((i) => [i.id, i]));
}

const waitRealMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the readiness report grades a 429 as a request to send again', () => {
  it('a create refused by --rate-limit and sent again once its Retry-After passed: retried, Retry-After honoured', async () => {
    sandbox = await testSandbox({ rateLimit: 1, adminTokens: [ADMIN] });
    expect((await create(sandbox, 'FIRST')).status).toBe(201);
    const limited = await create(sandbox, 'LIMITED');
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect((await items(sandbox))['fault.503-retried']).toMatchObject({ status: 'not_handled', detail: expect.stringContaining('(1 not sent again)') });
    await waitRealMs(retryAfter * 1000 + 50);
    expect((await create(sandbox, 'LIMITED')).status).toBe(201);
    const report = await items(sandbox);
    expect(report['fault.503-retried']).toMatchObject({ status: 'handled' });
    expect(report['fault.retry-after']).toMatchObject({ status: 'handled' });
  });

  it('a create sent again at once into the rate limit: retried, but Retry-After not honoured', async () => {
    sandbox = await testSandbox({ rateLimit: 1, adminTokens: [ADMIN] });
    expect((await create(sandbox, 'FIRST')).status).toBe(201);
    expect((await create(sandbox, 'HAMMER')).status).toBe(429);
    expect((await create(sandbox, 'HAMMER')).status).toBe(429);
    expect((await items(sandbox))['fault.retry-after']).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of 1/) });
  });

  it("a fault rule's 429 with its Retry-After is graded as the rate limit's is", async () => {
    sandbox = await testSandbox({ adminTokens: [ADMIN] });
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 429, headers: { 'Retry-After': '30' } }, times: 1 } });
    expect((await create(sandbox, 'RULED')).status).toBe(429);
    expect((await items(sandbox))['fault.503-retried']).toMatchObject({ status: 'not_handled' });
    await sandbox.advance(30_000);
    expect((await create(sandbox, 'RULED')).status).toBe(201);
    const report = await items(sandbox);
    expect(report['fault.503-retried']).toMatchObject({ status: 'handled' });
    expect(report['fault.retry-after']).toMatchObject({ status: 'handled' });
  });
});
