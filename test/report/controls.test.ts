import { afterEach, describe, expect, it } from 'vitest';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const item = async (s: TestSandbox, id: string) => ((await s.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string; detail: string }> }).items.find((i) => i.id === id)!;

describe("the readiness report and a refusal of the sandbox's own controls", () => {
  it('does not grade a tracking read whose Prefer asked for an undocumented status as the provider refusing it, nor its next read as sending it again unchanged', async () => {
    sandbox = await testSandbox();
    const refused = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { Prefer: 'code=500' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ errors: [{ field: 'header.prefer' }] });
    expect((await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { Prefer: 'code=404' } })).status).toBe(404);
    expect(await item(sandbox, 'error.tracking-400')).toMatchObject({ status: 'not_exercised' });
  });

  it('still grades a malformed AWB, the provider\'s own 400', async () => {
    sandbox = await testSandbox();
    expect((await sandbox.call('GET', '/v1/order/tracking/not_an_awb!')).status).toBe(400);
    expect((await sandbox.call('GET', '/v1/order/tracking/not_an_awb!')).status).toBe(400);
    expect(await item(sandbox, 'error.tracking-400')).toMatchObject({ status: 'not_handled' });
  });
});
