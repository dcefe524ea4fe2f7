import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { runDeliveries } from '../../src/client/index.js';
import { heldServer } from '../support/held-server.js';
import { createRequest } from '../support/orders.js';
import { Receiver } from './receiver.js';

const TOKEN = 'token-recover';
let sandbox: Sandbox;
let receiver: Receiver;
let down = true;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sandbox.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const statuses = async () => ((await api('GET', '/__sandbox/webhooks/deliveries')).body.deliveries as Array<{ status: string }>).map((d) => d.status);

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runDeliveries(argv, (t) => void (stdout += t), (t) => void (stderr += t));
  return { code, stdout, stderr };
}

beforeAll(async () => {
  receiver = await Receiver.start();
  receiver.respond = () => (down ? { status: 503 } : { status: 200 });
  sandbox = await createSandbox({ port: 0, clock: 'manual', seed: 'recover', awbDelay: '1m', webhookRetries: '0', logLevel: 'silent', clients: [{ token: TOKEN, id: 'a', webhook: { url: receiver.url } }] });
  // Two deliveries failed while the receiver was down.
  expect((await api('POST', '/v1/order', createRequest(2))).status).toBe(201);
  await sandbox.clock.advance(60_000);
  expect(await statuses()).toEqual(['failed', 'failed']);
  down = false;
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
  await receiver?.close();
});

describe('shipping-sandbox deliveries recover', () => {
  it('exits 1 with the sandbox’s field error for a window that ends before it starts, and queues nothing', async () => {
    const { code, stderr } = await run('recover', '--url', sandbox.url, '--token', TOKEN, '--since', '2026-05-01T12:00:00Z', '--until', '2026-05-01T11:00:00Z');
    expect(code).toBe(1);
    expect(stderr).toMatch(/answered 400: .*\n {2}until: must not be before since/);
    await sandbox.clock.advance(0);
    expect(await statuses()).toEqual(['failed', 'failed']);
  });

  it('prints its usage for --help, and the options of recover for recover --help', async () => {
    expect(await run('--help')).toMatchObject({ code: 0, stdout: expect.stringContaining('shipping-sandbox deliveries recover --since <time>') });
    expect(await run('recover', '--help')).toMatchObject({ code: 0, stdout: expect.stringMatching(/--since <time>[\s\S]*--until <time>[\s\S]*--timeout <duration>[\s\S]*\(default: 30s\)/) });
  });

  it.each([
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't'], /--since/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', 'yesterday'], /--since.*ISO 8601/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', '2026-11-01'], /--since.*ISO 8601 with its offset/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', '2026-02-30T10:00:00Z'], /--since.*ISO 8601 with its offset/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', '2026-05-01T24:00:00Z'], /--since.*ISO 8601 with its offset/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', '', '--since', '2026-11-01T00:00:00Z'], /'--token <token>' argument '' is invalid\. must not be empty/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', '2026-11-01 10:00'], /--since.*ISO 8601 with its offset/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', '2026-05-01T12:00:00Z', '--until', 'soon'], /--until.*ISO 8601/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', '2026-11-01T00:00:00Z', '--timeout', '-1'], /'--timeout <duration>' argument '-1' is invalid\. must be a duration above 0/],
    [['recover', '--url', 'http://127.0.0.1:9', '--token', 't', '--since', '2026-11-01T00:00:00Z', '--timeout', ''], /'--timeout <duration>' argument '' is invalid\. must be a duration above 0/],
    [['resend'], /unknown command 'resend'/],
  ])('exits 2 naming what is wrong for %j', async (argv, message) => {
    const { code, stderr } = await run(...argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('exits 2 within --timeout saying nothing answered, when what listens at --url takes the connection and never answers', async () => {
    const silent = await heldServer();
    try {
      const started = performance.now();
      const { code, stdout, stderr } = await run('recover', '--url', silent.url, '--token', TOKEN, '--since', '2000-01-01T00:00:00Z', '--timeout', '200ms');
      expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `shipping-sandbox deliveries recover: no answer from ${silent.url} within 200ms\n` });
      expect(silent.requests).toEqual(['POST /__sandbox/webhooks/recover']);
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      await silent.close();
    }
  });

  it('exits 1 with the start of the page when a proxy refuses with one that is not JSON (a 502), and 2 when what answers 200 is not a sandbox', async () => {
    const proxy = await heldServer((req, res) => (req.headers.authorization === 'Bearer refused-by-proxy' ? res.writeHead(502).end('<html>Bad Gateway</html>') : res.writeHead(200).end('<html>a page</html>')));
    try {
      const refused = await run('recover', '--url', proxy.url, '--token', 'refused-by-proxy', '--since', '2000-01-01T00:00:00Z');
      expect(refused).toEqual({ code: 1, stdout: '', stderr: 'shipping-sandbox deliveries recover: the sandbox answered 502: <html>Bad Gateway</html> (not the sandbox\'s error envelope: is --url a shipping sandbox, or a proxy in front of one?)\n' });
      const page = await run('recover', '--url', proxy.url, '--token', TOKEN, '--since', '2000-01-01T00:00:00Z');
      expect(page.code).toBe(2);
      expect(page.stderr).toMatch(/^shipping-sandbox deliveries recover: http:\/\/127\.0\.0\.1:\d+\/? answered 200 with no recovery: is it a shipping sandbox\?\n$/);
    } finally {
      await proxy.close();
    }
  });

  it('queues the failed deliveries, which the background work then delivers (test/e2e/deliveries-recover.test.ts runs it through the real CLI)', async () => {
    const { code, stdout, stderr } = await run('recover', '--url', sandbox.url, '--token', TOKEN, '--since', '2000-01-01T00:00:00Z');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^queued 2 failed deliveries created from 2000-01-01T00:00:00.000Z to now for another attempt/);
    expect(stdout).not.toMatch(/left out/);
    await sandbox.clock.advance(0);
    expect(await statuses()).toEqual(['delivered', 'delivered']);
  });

  it('says how many failed deliveries it left out and why', async () => {
    const skipping = await heldServer((_req, res) =>
      res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ queued: 1, skipped: { endpoint_unavailable: 3, attempt_limit: 2 }, since: '2000-01-01T00:00:00.000Z', until: null, now: '2026-01-01T00:00:00.000Z' })),
    );
    try {
      const { code, stdout } = await run('recover', '--url', skipping.url, '--token', TOKEN, '--since', '2000-01-01T00:00:00Z');
      expect(code).toBe(0);
      expect(stdout.split('\n')[1]).toBe('left out 3 whose endpoint is deleted, disabled, has no URL or is a listener not connected now and 2 that already have 50 attempts');
    } finally {
      await skipping.close();
    }
  });
});
