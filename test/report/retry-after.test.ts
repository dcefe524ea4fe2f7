import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { tempDir } from '../support/tmp.js';
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

interface Report {
  items: Array<{ id: string; status: string; detail: string }>;
  coverage: { operations: Array<{ operation_id: string; statuses: Array<{ status: number; exercised: number }> }> };
}

/** The report as an admin reads it: one read, as the admins' allowance is one request a second too. */
async function report(s: TestSandbox): Promise<{ item: (id: string) => { status: string; detail: string }; coverage: Report['coverage'] }> {
  const body = (await s.call('GET', '/__sandbox/report', { token: ADMIN, headers: { 'X-Sandbox-Client': 'client-a' } })).body as Report;
  return { item: (id) => body.items.find((i) => i.id === id)!, coverage: body.coverage };
}

describe('the readiness report and a 429', () => {
  it("grades a fault rule's 429 as a 503: a request to send again, after its Retry-After", async () => {
    sandbox = await testSandbox({ adminTokens: [ADMIN] });
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 429, headers: { 'Retry-After': '30' } }, times: 1 } });
    expect((await create(sandbox, 'RULED')).status).toBe(429);
    expect((await report(sandbox)).item('fault.503-retried')).toMatchObject({ status: 'not_handled', detail: expect.stringContaining('(1 not sent again)') });
    await sandbox.advance(30_000);
    expect((await create(sandbox, 'RULED')).status).toBe(201);
    const { item } = await report(sandbox);
    expect(item('fault.503-retried')).toMatchObject({ status: 'handled' });
    expect(item('fault.retry-after')).toMatchObject({ status: 'handled' });
  });

  it("does not grade the 429 of --rate-limit, which protects a shared deployment: it counts in the coverage only", async () => {
    sandbox = await testSandbox({ rateLimit: 1, adminTokens: [ADMIN] });
    expect((await create(sandbox, 'FIRST')).status).toBe(201);
    expect((await create(sandbox, 'LIMITED')).status).toBe(429);
    expect((await create(sandbox, 'LIMITED')).status).toBe(429);
    const { item, coverage } = await report(sandbox);
    expect(item('fault.503-retried')).toMatchObject({ status: 'not_exercised' });
    expect(item('fault.retry-after')).toMatchObject({ status: 'not_exercised' });
    const creates = coverage.operations.find((o) => o.operation_id === 'createOrder')!;
    expect(creates.statuses.find((s) => s.status === 429)).toMatchObject({ exercised: 2 });
  });
});

describe('the readiness report and a Prefer: code=503', () => {
  it("judges the retry's wait against the Retry-After the documented 503 carries", async () => {
    sandbox = await testSandbox({ adminTokens: [ADMIN] });
    const request = createRequest(1);
    const asked = await sandbox.call('POST', '/v1/order', { body: request, headers: { Prefer: 'code=503' } });
    expect(asked.status).toBe(503);
    const wait = Number(asked.headers['retry-after']);
    expect(wait).toBeGreaterThan(0);
    // Sent again at once: retried, but sooner than Retry-After said.
    expect((await sandbox.call('POST', '/v1/order', { body: request })).status).toBe(201);
    const first = await report(sandbox);
    expect(first.item('fault.503-retried')).toMatchObject({ status: 'handled' });
    expect(first.item('fault.retry-after')).toMatchObject({ status: 'not_handled' });
  });

  it('takes a retry after the manual clock moved past Retry-After as a wait', async () => {
    sandbox = await testSandbox({ adminTokens: [ADMIN] });
    const request = createRequest(1);
    const asked = await sandbox.call('POST', '/v1/order', { body: request, headers: { Prefer: 'code=503' } });
    await sandbox.advance(Number(asked.headers['retry-after']) * 1000);
    expect((await sandbox.call('POST', '/v1/order', { body: request })).status).toBe(201);
    expect((await report(sandbox)).item('fault.retry-after')).toMatchObject({ status: 'handled' });
  });
});

describe("the readiness report and a store's 503", () => {
  const dir = tempDir();

  it('does not take an advance of the manual clock as the wait: the outage is in real time', async () => {
    const fileSystem = new FaultyFileSystem();
    sandbox = await testSandbox({ data: join(dir(), 'sandbox.json'), adminTokens: [ADMIN] }, { storeFileSystem: fileSystem });
    const request = createRequest(1);
    fileSystem.failing = 'ENOSPC';
    const refused = await sandbox.call('POST', '/v1/order', { body: request });
    expect(refused.status).toBe(503);
    fileSystem.failing = undefined;
    await sandbox.advance(Number(refused.headers['retry-after']) * 1000);
    expect((await sandbox.call('POST', '/v1/order', { body: request })).status).toBe(201);
    const { item } = await report(sandbox);
    expect(item('fault.503-retried')).toMatchObject({ status: 'handled' });
    expect(item('fault.retry-after')).toMatchObject({ status: 'not_handled' });
  });
});

describe('the readiness report and a retry built anew from the same order', () => {
  /** The same order as a client that builds its body again would send it: keys in another order, and an id of its own the provider ignores. */
  const rebuilt = (request: Record<string, unknown>, id: string): Record<string, unknown> => {
    const reversed = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).reverse());
    return { client_request_id: id, ...reversed({ ...request, items: (request.items as Array<Record<string, unknown>>).map(reversed) }) };
  };
  const fault503 = (s: TestSandbox) =>
    s.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 503, headers: { 'Retry-After': '1' } }, times: 1 } });

  it('takes it for the retry of the 503, every time: the provider reads it as the same body', async () => {
    sandbox = await testSandbox({ adminTokens: [ADMIN] });
    for (const code of ['FIRST', 'SECOND']) {
      const request = createRequest(1) as unknown as Record<string, unknown>;
      (request.items as Array<{ order_code: string }>)[0]!.order_code = code;
      await fault503(sandbox);
      expect((await sandbox.call('POST', '/v1/order', { body: request })).status).toBe(503);
      await sandbox.advance(1_000);
      expect((await sandbox.call('POST', '/v1/order', { body: rebuilt(request, `attempt-2-${code}`) })).status).toBe(201);
    }
    const { item } = await report(sandbox);
    expect(item('fault.503-retried')).toMatchObject({ status: 'handled' });
    expect(item('fault.503-retried').detail).not.toContain('not sent again');
    expect(item('fault.retry-after')).toMatchObject({ status: 'handled' });
  });

  it('does not take another order (another receiver) for the retry', async () => {
    sandbox = await testSandbox({ adminTokens: [ADMIN] });
    const request = createRequest(1);
    await fault503(sandbox);
    expect((await sandbox.call('POST', '/v1/order', { body: request })).status).toBe(503);
    await sandbox.advance(1_000);
    const other = createRequest(1);
    other.items[0]!.receiver_name = 'Someone Else';
    expect((await sandbox.call('POST', '/v1/order', { body: other })).status).toBe(201);
    expect((await report(sandbox)).item('fault.503-retried')).toMatchObject({ status: 'not_handled', detail: expect.stringContaining('not sent again') });
  });
});
