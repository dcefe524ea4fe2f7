import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCarefulClient } from '../../examples/careful-client.js';
import { runCli, startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const GUIDE = readFileSync(new URL('../../docs/guides/ci-and-readiness.md', import.meta.url), 'utf8');
const TOKEN = 'ci-token';

/** The README's CI example: its sandbox's flags and the gate of its report step (its threshold and the items it requires). */
function ciExample(text: string): { flags: string[]; failUnder: string; gate: string[] } {
  const block = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('shipping-sandbox report'));
  if (!block) throw new Error('no CI example with `shipping-sandbox report`');
  const start = /npx (?:--no-install )?shipping-sandbox (--port .*?) &$/m.exec(block)![1]!;
  const failUnder = /--fail-under (\d+)/.exec(block)![1]!;
  const required = /--require (\S+)/.exec(block)?.[1];
  return { flags: start.replaceAll('"$CLIENT_TOKEN"', TOKEN).split(' '), failUnder, gate: ['--fail-under', failUnder, ...(required ? ['--require', required] : [])] };
}

/** The readiness recipe (examples/careful-client.ts) through the README's CI example, step by step. */
describe("a careful client through the README's CI example", () => {
  const { flags, failUnder, gate } = ciExample(README);
  let cli: RunningCli;
  let report: Awaited<ReturnType<typeof runCli>>;
  beforeAll(async () => {
    cli = await startCli(flags.map((flag) => (flag === '4010' ? '0' : flag)).concat('--log-level', 'silent'));
    const call = (path: string, body?: unknown) =>
      fetch(`${cli.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
    expect((await call('/__sandbox/runs', { name: 'ci-1' })).status).toBe(201);
    const client = await runCarefulClient(cli.url, TOKEN);
    expect((await call('/__sandbox/checks')).status).toBe(200);
    await client.close();
    report = await runCli(['report', '--url', cli.url, '--token', TOKEN, ...gate]);
  }, 90_000);
  afterAll(() => cli?.stop());

  it('keeps a threshold that grades something: 80 % of the graded items or more, and the items no share excuses; the same in the CI guide', () => {
    expect(Number(failUnder)).toBeGreaterThanOrEqual(80);
    expect(ciExample(GUIDE).gate).toEqual(gate);
    expect(gate).toEqual(expect.arrayContaining(['--require', expect.stringContaining('webhook.bad-signature')]));
    expect(flags).toEqual(expect.arrayContaining(['--clock', 'manual', '--seed', '--data', ':memory:']));
  });

  it('passes `shipping-sandbox report --fail-under` at that threshold', () => {
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
  });

  it('is handled on every graded item', () => {
    const { items, summary } = JSON.parse(report.stdout) as { items: Array<{ id: string; graded: boolean; status: string; detail: string }>; summary: { handled_percent: number } };
    expect(items.filter((i) => i.graded && i.status !== 'handled').map((i) => `${i.id}: ${i.status} ${i.detail}`)).toEqual([]);
    expect(summary.handled_percent).toBe(100);
  });

  it('fails the same client once its receiver accepts forged and stale signatures, though its share stays above the threshold', async () => {
    const lenient = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
    await new Promise<void>((resolve) => lenient.listen(0, '127.0.0.1', resolve));
    try {
      const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
      const url = `http://127.0.0.1:${(lenient.address() as AddressInfo).port}/hooks`;
      expect((await fetch(`${cli.url}/__sandbox/webhook`, { method: 'PUT', headers, body: JSON.stringify({ url }) })).status).toBe(200);
      expect((await fetch(`${cli.url}/__sandbox/checks`, { method: 'POST', headers })).status).toBe(200);
      const lax = await runCli(['report', '--url', cli.url, '--token', TOKEN, ...gate]);
      expect(lax.code).toBe(1);
      expect(lax.stderr).toMatch(/check\.bad-signature is required \(--require\) and not handled/);
      expect(lax.stderr).toMatch(/check\.stale-timestamp is required/);
      expect(lax.stderr).not.toMatch(/below --fail-under/);
    } finally {
      await new Promise((resolve) => lenient.close(resolve));
    }
  }, 30_000);
});

/** The recipe on clients that are not fresh: what the README's quick start leaves, and settings set through the API. */
describe('the readiness recipe on a client that already has orders or settings', () => {
  const { flags } = ciExample(README);
  const HELD = 'held-token';
  const SET = 'set-token';
  let cli: RunningCli;
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${cli.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    cli = await startCli(flags.map((flag) => (flag === '4010' ? '0' : flag)).concat('--token', HELD, '--token', SET, '--log-level', 'silent'));
  }, 60_000);
  afterAll(() => cli?.stop());

  it("counts only its own orders' AWB webhooks when the quick start left a held delivery (an order whose AWB came with no URL)", async () => {
    const created = await call(HELD, 'POST', '/v1/order', createRequest(1));
    const orderNo = (created.body.order_numbers as string[])[0]!;
    expect((await call(HELD, 'POST', `/__sandbox/orders/${orderNo}/awb`)).status).toBe(200);
    expect((await call(HELD, 'POST', '/__sandbox/runs', { name: 'ci-held' })).status).toBe(201);
    const client = await runCarefulClient(cli.url, HELD);
    expect((await call(HELD, 'POST', '/__sandbox/checks')).status).toBe(200);
    await client.close();
    const report = await runCli(['report', '--url', cli.url, '--token', HELD, ...ciExample(README).gate]);
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
  }, 90_000);

  it('puts back at close() the URL, secret and chaos the client set through the API', async () => {
    const mine = { url: 'http://127.0.0.1:9/my-hooks', secret: 'whsec_bXktb3duLXNlY3JldC1vZi0yNC1ieXRlcw==', chaos: ['duplicate'] };
    expect((await call(SET, 'PUT', '/__sandbox/webhook', mine)).status).toBe(200);
    const before = (await call(SET, 'GET', '/__sandbox/webhook')).body;
    const client = await runCarefulClient(cli.url, SET);
    expect((await call(SET, 'GET', '/__sandbox/webhook')).body.url).not.toBe(mine.url);
    await client.close();
    expect((await call(SET, 'GET', '/__sandbox/webhook')).body).toEqual(before);
  }, 90_000);
});
