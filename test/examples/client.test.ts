import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExample, type ExampleRun } from '../../examples/client.js';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';

const TOKENS = { fresh: 'example-token', runtime: 'runtime-token', busy: 'busy-token' };

/** A control or provider call as the client of `token`: its status and JSON body. */
async function call(cli: RunningCli, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${cli.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** examples/client.ts (openapi-fetch on the generated types) against the real CLI, end to end. */
describe('examples/client.ts against the CLI', () => {
  let cli: RunningCli;
  let run: ExampleRun;
  beforeAll(async () => {
    const tokens = Object.values(TOKENS).flatMap((token) => ['--token', token]);
    cli = await startCli(['--port', '0', '--data', ':memory:', ...tokens, '--log-level', 'silent', '--awb-delay', '1h']);
    run = await runExample(cli.url, TOKENS.fresh);
  }, 60_000);
  afterAll(() => cli?.stop());

  it('creates the two orders of examples/order.json', () => {
    expect(run.orderNumbers).toHaveLength(2);
  });

  it('receives the AWB webhook, verified with the Standard Webhooks signature', () => {
    expect(run.awb).toMatch(/^JN[0-9]{10}$/);
    expect(run.webhookId).toMatch(/^msg_/);
  });

  it('tracks the order from the pick-up scan to delivery', () => {
    expect(run.statuses[0]).toBe('1');
    expect(run.statuses.at(-1)).toBe('2');
    expect(run.delivered.history[0]!.pod_photo).toMatch(new RegExp(`/__sandbox/pod/${run.awb}-[0-9a-f]{20}\\.png$`));
  });

  it('handles a 400 naming the field and a 404 for an unknown AWB', () => {
    expect(run.badRequestField).toBe('items[0].item_weight');
    expect(run.notFoundMessage).toBe('Record Not Found');
  });

  it('leaves a client that had no orders as it found it: no URL, no orders', async () => {
    const hook = await call(cli, TOKENS.fresh, 'GET', '/__sandbox/webhook');
    expect(hook.body).toMatchObject({ url: null, state: 'no_url', source: 'none' });
    expect((await call(cli, TOKENS.fresh, 'GET', '/__sandbox/orders')).body.total).toBe(0);
  });

  it('puts back the URL, secret and chaos of a client that set them through the API', async () => {
    const mine = { url: 'http://127.0.0.1:9/my-hooks', secret: 'whsec_bXktb3duLXNlY3JldC1vZi0yNC1ieXRlcw==', chaos: ['duplicate'] };
    expect((await call(cli, TOKENS.runtime, 'PUT', '/__sandbox/webhook', mine)).status).toBe(200);
    const before = (await call(cli, TOKENS.runtime, 'GET', '/__sandbox/webhook')).body;
    await runExample(cli.url, TOKENS.runtime);
    const after = (await call(cli, TOKENS.runtime, 'GET', '/__sandbox/webhook')).body;
    expect(after).toEqual(before);
    expect(after).toMatchObject({ ...mine, source: 'runtime', state: 'enabled' });
  }, 60_000);

  it('refuses, changing nothing, a client with orders whose URL the API cannot put back', async () => {
    expect((await call(cli, TOKENS.busy, 'POST', '/v1/order', createRequest(1))).status).toBe(201);
    const before = (await call(cli, TOKENS.busy, 'GET', '/__sandbox/webhook')).body;
    await expect(runExample(cli.url, TOKENS.busy)).rejects.toThrow(/cannot be put back through the API.*--token <your token> --token example-token/);
    expect((await call(cli, TOKENS.busy, 'GET', '/__sandbox/webhook')).body).toEqual(before);
    expect((await call(cli, TOKENS.busy, 'GET', '/__sandbox/orders')).body.total).toBe(1);
  });
});
