import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, startCli, type RunningCli } from '../support/cli.js';
import { isRefused, TestListener } from '../support/listener.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { roundRobinProxy } from '../support/proxy.js';
import { Receiver } from '../webhooks/receiver.js';

const TOKEN = 'replica-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** A CLI replica on the database (real clock); its own target policy would refuse the receiver on 127.0.0.1. */
const replica = (databaseUrl: string): Promise<RunningCli> =>
  startCli(['--port', '0', '--database-url', databaseUrl, '--token', TOKEN, '--webhook-targets', 'public', '--awb-delay', '200ms', '--seed', 'replicas', '--log-level', 'warn']);

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a listener on two replicas behind a round-robin proxy', () => {
  it('receives the deliveries both replicas make, whichever holds its connection', async () => {
    const receiver = await Receiver.start();
    const databaseUrl = await server.freshDatabase();
    const a = await replica(databaseUrl);
    const b = await replica(databaseUrl);
    const proxy = await roundRobinProxy([a.url, b.url]);
    let session: TestListener | undefined;
    try {
      const opened = await TestListener.open(proxy.url, { token: TOKEN, name: 'laptop', events: 'awb.generated', forwardTo: `${receiver.url}/hooks` });
      if (isRefused(opened)) throw new Error(`refused: ${JSON.stringify(opened.body)}`);
      session = opened;
      // Orders through each replica directly: each makes AWBs and claims webhook jobs; the listener is held by one.
      const created: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${(i % 2 ? a : b).url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(10)) });
        expect(res.status).toBe(201);
        created.push(...((await res.json()) as { order_numbers: string[] }).order_numbers);
      }
      await until('100 webhooks', () => new Set(receiver.received.map((r) => r.id)).size >= 100);
      const verifier = new Webhook(session.ready.secret);
      const orders = receiver.received.map((r) => (verifier.verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature }) as { order_no: string }).order_no);
      expect(new Set(orders)).toEqual(new Set(created));
      // Each replica made some of the attempts (its metrics count those it made): the one not
      // holding the connection handed its attempts over instead of holding them.
      for (const r of [a, b]) {
        const metrics = await (await fetch(`${r.url}/__sandbox/metrics`, { headers })).text();
        const delivered = Number(/sandbox_webhook_attempts_total\{outcome="delivered"\} (\d+)/.exec(metrics)?.[1] ?? 0);
        expect(delivered, metrics.split('\n').filter((l) => l.includes('webhook_attempts')).join('\n')).toBeGreaterThan(0);
      }
      // Both replicas listed it as connected (the one holding it, and the other by asking).
      for (const r of [a, b]) {
        const listed = (await (await fetch(`${r.url}/__sandbox/webhooks/endpoints`, { headers })).json()) as { endpoints: Array<{ listener: string | null; connected?: boolean }> };
        expect(listed.endpoints.find((e) => e.listener === 'laptop')?.connected).toBe(true);
      }
      // The webhook checks through either replica: the one not holding the session hands each step over, its message with it.
      receiver.respond = (webhook) => {
        try {
          verifier.verify(webhook.body, webhook.headers as Record<string, string>);
          return { status: 204 };
        } catch {
          return { status: 401 };
        }
      };
      for (const r of [a, b]) {
        const graded = await fetch(`${r.url}/__sandbox/checks?endpoint_id=${session.ready.endpoint_id}`, { method: 'POST', headers });
        expect(await graded.json()).toMatchObject({ passed: 5, failed: 0, not_run: 0 });
      }
      receiver.respond = () => ({ status: 200 });
      // Every delivery delivered, each logged with the listener as its target.
      await until('all delivered', async () => {
        const res = (await (await fetch(`${a.url}/__sandbox/webhooks/deliveries?limit=1000&endpoint_id=${session!.ready.endpoint_id}`, { headers })).json()) as { deliveries: Array<{ status: string; attempts: Array<{ url: string }> }> };
        return res.deliveries.length === 100 && res.deliveries.every((d) => d.status === 'delivered' && d.attempts.every((at) => at.url === 'listener:laptop'));
      });
      // An attempt handed over keeps what the listener shows of it: the secret it was signed with, and a chaos copy's kind.
      expect(session.attempts.filter((at) => at.secret !== session!.ready.secret)).toEqual([]);
      for (const r of [a, b]) {
        const res = await fetch(`${r.url}/v1/order`, { method: 'POST', headers: { ...headers, 'x-sandbox-webhook-chaos': 'bad_signature' }, body: JSON.stringify(createRequest(1)) });
        expect(res.status).toBe(201);
      }
      await until('two forged copies', () => session!.attempts.filter((at) => at.chaos === 'bad_signature').length >= 2);
      // Gone from both: a replica asks the others about it at most once a second, however often the client lists
      // (each question waits 300 ms for an answer that no replica gives: ten listings asking each would take 3 s).
      await session.close();
      session = undefined;
      const laptopConnected = async (r: RunningCli) =>
        ((await (await fetch(`${r.url}/__sandbox/webhooks/endpoints`, { headers })).json()) as { endpoints: Array<{ listener: string | null; connected?: boolean }> }).endpoints.find((e) => e.listener === 'laptop')?.connected;
      await until('the listener gone from both', async () => (await laptopConnected(a)) === false && (await laptopConnected(b)) === false);
      const started = performance.now();
      for (let i = 0; i < 10; i++) expect(await laptopConnected(b)).toBe(false);
      // Asking at each listing would take 3 s and more (ten 300 ms waits, besides the listings themselves).
      expect(performance.now() - started).toBeLessThan(3_000);
    } finally {
      await session?.close();
      await proxy.close();
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 120_000);

  it('the real shipping-sandbox listen through the proxy receives what both replicas make', async () => {
    const receiver = await Receiver.start();
    const databaseUrl = await server.freshDatabase();
    const a = await replica(databaseUrl);
    const b = await replica(databaseUrl);
    const proxy = await roundRobinProxy([a.url, b.url]);
    const cli = spawnCli(['listen', '--url', proxy.url, '--token', TOKEN, '--forward-to', `${receiver.url}/hooks`, '--name', 'cli', '--events', 'awb.generated'], { SANDBOX_TOKENS: '' });
    let stdout = '';
    cli.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    try {
      await until('Ready', () => stdout.includes('Ready:'));
      const secret = /Signing secret: (whsec_\S+)/.exec(stdout)![1]!;
      const created: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${(i % 2 ? a : b).url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(10)) });
        created.push(...((await res.json()) as { order_numbers: string[] }).order_numbers);
      }
      await until('60 webhooks', () => new Set(receiver.received.map((r) => r.id)).size >= 60);
      const verifier = new Webhook(secret);
      const orders = receiver.received.map((r) => (verifier.verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature }) as { order_no: string }).order_no);
      expect(new Set(orders)).toEqual(new Set(created));
      for (const r of [a, b]) {
        const metrics = await (await fetch(`${r.url}/__sandbox/metrics`, { headers })).text();
        expect(Number(/sandbox_webhook_attempts_total\{outcome="delivered"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
      }
    } finally {
      cli.kill('SIGINT');
      await proxy.close();
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 120_000);

  it('a reset through the other replica closes the session to connect again (4004), a delete through it for good (4002)', async () => {
    const databaseUrl = await server.freshDatabase();
    const a = await replica(databaseUrl);
    const b = await replica(databaseUrl);
    const open = async (): Promise<TestListener> => {
      const opened = await TestListener.open(a.url, { token: TOKEN, name: 'laptop', forwardTo: 'http://127.0.0.1:9/hooks' });
      if (isRefused(opened)) throw new Error(`refused: ${JSON.stringify(opened.body)}`);
      return opened;
    };
    try {
      const first = await open();
      expect((await fetch(`${b.url}/__sandbox/reset`, { method: 'POST', headers })).status).toBe(200);
      expect(await first.closed).toBe(4004);
      const second = await open();
      expect(second.ready.endpoint_id).not.toBe(first.ready.endpoint_id);
      expect((await fetch(`${b.url}/__sandbox/webhooks/endpoints/${second.ready.endpoint_id}`, { method: 'DELETE', headers })).status).toBe(200);
      expect(await second.closed).toBe(4002);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 60_000);
});
