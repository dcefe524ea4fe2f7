import { spawn } from 'node:child_process';
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
    // What the client had before the run, which a reset would remove: a fault rule, a named run, a journal entry.
    const rule = { match: { operation_id: 'listProvinces' }, action: { type: 'status', status: 503 }, times: 1 };
    expect((await call(cli, TOKENS.fresh, 'POST', '/__sandbox/faults', rule)).status).toBe(201);
    expect((await call(cli, TOKENS.fresh, 'POST', '/__sandbox/runs', { name: 'mine' })).status).toBe(201);
    expect((await call(cli, TOKENS.fresh, 'GET', '/v1/couriers')).status).toBe(200);
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

  it("does not reset a client that had no orders: its fault rules, named run and journal stay", async () => {
    expect((await call(cli, TOKENS.fresh, 'GET', '/__sandbox/faults')).body.rules).toHaveLength(1);
    expect((await call(cli, TOKENS.fresh, 'GET', '/__sandbox/report')).body.run).toMatchObject({ name: 'mine' });
    expect((await call(cli, TOKENS.fresh, 'GET', '/__sandbox/requests?operation_id=listCouriers')).body.total).toBe(1);
  });

  it("leaves on a client whose URL was not set through the API what the first-client guide says: its orders and its receiver's URL", async () => {
    const orders = (await call(cli, TOKENS.fresh, 'GET', '/__sandbox/orders')).body;
    expect(orders.total).toBe(2);
    const hook = (await call(cli, TOKENS.fresh, 'GET', '/__sandbox/webhook')).body;
    expect(hook).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/webhooks\/awb$/), source: 'runtime', chaos: [] });
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

  it('refuses, changing nothing, a client with orders and no webhook URL, which the API cannot put back', async () => {
    expect((await call(cli, TOKENS.busy, 'POST', '/v1/order', createRequest(1))).status).toBe(201);
    const before = (await call(cli, TOKENS.busy, 'GET', '/__sandbox/webhook')).body;
    await expect(runExample(cli.url, TOKENS.busy)).rejects.toThrow(/^This client has no webhook URL, which cannot be put back through the API .*--port 4011 --data :memory: --token example-token.*a clients file .*not --token <your token>/);
    expect((await call(cli, TOKENS.busy, 'GET', '/__sandbox/webhook')).body).toEqual(before);
    expect((await call(cli, TOKENS.busy, 'GET', '/__sandbox/orders')).body.total).toBe(1);
  });

  it("refuses a client with orders whose URL is the sandbox's --webhook-url, saying where the URL comes from", async () => {
    const other = await startCli(['--port', '0', '--data', ':memory:', '--token', TOKENS.busy, '--webhook-url', 'http://127.0.0.1:9/hooks', '--log-level', 'silent', '--awb-delay', '1h']);
    try {
      expect((await call(other, TOKENS.busy, 'POST', '/v1/order', createRequest(1))).status).toBe(201);
      await expect(runExample(other.url, TOKENS.busy)).rejects.toThrow(/^This client's webhook URL \(http:\/\/127\.0\.0\.1:9\/hooks, set by the sandbox's --webhook-url\) cannot be put back/);
    } finally {
      await other.stop();
    }
  }, 60_000);
});

/** The example on a sandbox whose clock moves only when asked: it must neither hang nor leave the settings changed. */
describe('examples/client.ts on a manual clock', () => {
  const MANUAL = { plain: 'manual-token', late: 'late-token', SIGINT: 'sigint-token', SIGTERM: 'sigterm-token' };
  const MINE = { url: 'http://127.0.0.1:9/my-hooks', secret: 'whsec_bXktb3duLXNlY3JldC1vZi0yNC1ieXRlcw==', chaos: ['late'] };
  let cli: RunningCli;
  beforeAll(async () => {
    cli = await startCli(['--port', '0', '--data', ':memory:', '--clock', 'manual', ...Object.values(MANUAL).flatMap((t) => ['--token', t]), '--log-level', 'silent']);
  }, 60_000);
  afterAll(() => cli?.stop());

  it('receives the AWB webhook (advancing the clock by 0 ms) and tracks the order to delivery', async () => {
    const run = await runExample(cli.url, MANUAL.plain, { timeoutMs: 10_000 });
    expect(run.webhookId).toMatch(/^msg_/);
    expect(run.statuses.at(-1)).toBe('2');
  }, 30_000);

  it('stops with a message naming the "late" chaos when no webhook comes in time, and puts the settings back', async () => {
    expect((await call(cli, MANUAL.late, 'PUT', '/__sandbox/webhook', MINE)).status).toBe(200);
    const before = (await call(cli, MANUAL.late, 'GET', '/__sandbox/webhook')).body;
    await expect(runExample(cli.url, MANUAL.late, { timeoutMs: 1_500 })).rejects.toThrow(/No AWB webhook for order \d+ within 1\.5 s \(manual clock\)\. The client's webhook chaos "late"/);
    expect((await call(cli, MANUAL.late, 'GET', '/__sandbox/webhook')).body).toEqual(before);
  }, 30_000);

  it.each([['SIGINT', 130], ['SIGTERM', 143]] as const)('puts the settings back when the script gets %s while it waits, and exits %i', async (signal, code) => {
    const token = MANUAL[signal];
    expect((await call(cli, token, 'PUT', '/__sandbox/webhook', MINE)).status).toBe(200);
    const before = (await call(cli, token, 'GET', '/__sandbox/webhook')).body;
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/client.ts', cli.url, token], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
    // Waiting for the webhook ("late" holds it): the example's order has its AWB.
    const until = Date.now() + 15_000;
    while (!((await call(cli, token, 'GET', '/__sandbox/orders')).body.orders as Array<{ awb: string | null }> | undefined)?.some((o) => o.awb)) {
      if (Date.now() > until) throw new Error(`the example never got to its webhook: ${stderr}`);
      await new Promise((done) => setTimeout(done, 100));
    }
    child.kill(signal);
    expect(await exited).toBe(code);
    expect(stderr).toContain(`stopped by ${signal}`);
    expect((await call(cli, token, 'GET', '/__sandbox/webhook')).body).toEqual(before);
  }, 30_000);

  it('exits 2 saying how to give the token when the script has none (no second argument, SANDBOX_TOKENS unset)', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.SANDBOX_TOKENS;
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/client.ts', cli.url], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await new Promise<number | null>((done) => child.once('exit', (c) => done(c)))).toBe(2);
    expect(stderr).toBe('No token: pass the one to use as the second argument (npx tsx examples/client.ts <base URL> <token>), or set SANDBOX_TOKENS to it\n');
  }, 30_000);
});
