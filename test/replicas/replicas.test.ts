import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
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

/** A CLI replica on the database (real clock), sending webhooks to the receiver. */
function replica(databaseUrl: string, receiver: Receiver, extra: string[] = []): Promise<RunningCli> {
  return startCli(['--port', '0', '--database-url', databaseUrl, '--token', TOKEN, '--webhook-url', receiver.url, '--awb-delay', '200ms', '--seed', 'replicas', '--log-level', 'warn', ...extra]);
}

/** Two CLI replicas on one database, as the compose file runs them (real clock). */
async function twoReplicas(databaseUrl: string, receiver: Receiver): Promise<[RunningCli, RunningCli]> {
  const a = await replica(databaseUrl, receiver);
  const b = await replica(databaseUrl, receiver);
  return [a, b];
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('two replicas on one PostgreSQL database', () => {
  it('serve one sandbox: an order created through A is detailed, tracked, listed and cancelled through B', async () => {
    const receiver = await Receiver.start();
    const databaseUrl = await server.freshDatabase();
    const [a, b] = await twoReplicas(databaseUrl, receiver);
    try {
      // The banner names the database without its password.
      expect(a.output()).toMatch(/data: +postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/sandbox_/);
      expect(a.output()).not.toContain(new URL(databaseUrl).password);
      const created = await fetch(`${a.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(2)) });
      expect(created.status).toBe(201);
      const [first, second] = ((await created.json()) as { order_numbers: string[] }).order_numbers;
      const detail = await until(
        async () => (await (await fetch(`${b.url}/__sandbox/orders/${first}`, { headers })).json()) as { awb: string | null; status: string },
        (order) => order.awb !== null,
      );
      expect(detail.status).toBe('awb_generated');
      const tracking = await fetch(`${b.url}/v1/order/tracking/${detail.awb}`, { headers });
      expect([200, 404]).toContain(tracking.status); // 404 until the pick-up scan, as the provider answers
      const listed = (await (await fetch(`${b.url}/__sandbox/orders?limit=10`, { headers })).json()) as { orders: Array<{ order_no: string }> };
      expect(listed.orders.map((o) => o.order_no).sort()).toEqual([first, second].sort());
      const cancelled = await fetch(`${b.url}/v1/order/cancel`, { method: 'POST', headers, body: JSON.stringify({ order_no: second }) });
      expect(cancelled.status).toBe(200);
      expect(((await (await fetch(`${a.url}/__sandbox/orders/${second}`, { headers })).json()) as { status: string }).status).toBe('cancelled');
    } finally {
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 60_000);

  it('track an order through A at the step just played through B, however often A tracked it before', async () => {
    const receiver = await Receiver.start();
    const databaseUrl = await server.freshDatabase();
    const [a, b] = await twoReplicas(databaseUrl, receiver);
    try {
      const created = await fetch(`${a.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      const [orderNo] = ((await created.json()) as { order_numbers: string[] }).order_numbers;
      const detail = await until(
        async () => (await (await fetch(`${a.url}/__sandbox/orders/${orderNo}`, { headers })).json()) as { awb: string | null },
        (order) => order.awb !== null,
      );
      const track = async () => {
        const res = await fetch(`${a.url}/v1/order/tracking/${detail.awb}`, { headers });
        return { status: res.status, body: await res.text() };
      };
      const steps: Array<{ status: number; body: string }> = [];
      for (let step = 0; step < 3; step++) {
        // Read through A again and again, as a client polling its tracking does, then played on through B.
        const before = [await track(), await track(), await track()];
        expect(new Set(before.map((t) => t.body)).size).toBe(1);
        steps.push(before[0]!);
        expect((await fetch(`${b.url}/__sandbox/orders/${orderNo}/advance`, { method: 'POST', headers, body: '{}' })).status).toBe(200);
      }
      steps.push(await track());
      // Each step shows through A as soon as B played it: four answers, each another.
      expect(new Set(steps.map((t) => t.body)).size).toBe(4);
      expect(steps.at(-1)!.status).toBe(200);
    } finally {
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 60_000);

  it('give 1,000 orders created across both exactly 1,000 AWB webhooks, with 1,000 distinct ids', async () => {
    const receiver = await Receiver.start();
    const [a, b] = await twoReplicas(await server.freshDatabase(), receiver);
    try {
      const creates = Array.from({ length: 20 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(50)) }).then((res) => res.status),
      );
      expect(new Set(await Promise.all(creates))).toEqual(new Set([201]));
      const awbWebhooks = () => receiver.received.filter((r) => r.json.event === 'awb.generated');
      await until(async () => awbWebhooks().length, (n) => n >= 1_000, 60_000);
      // A little longer: a duplicate would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const received = awbWebhooks();
      expect(received).toHaveLength(1_000);
      expect(new Set(received.map((r) => r.id)).size).toBe(1_000);
      expect(new Set(received.map((r) => r.json.order_no)).size).toBe(1_000);
    } finally {
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 120_000);

  it('list the deliveries made through either, newest first, in the order they were made', async () => {
    const receiver = await Receiver.start();
    const [a, b] = await twoReplicas(await server.freshDatabase(), receiver);
    try {
      const made: string[] = [];
      for (const replica of [a, b, b, a, b, a, a, b]) {
        const ping = await fetch(`${replica.url}/__sandbox/webhooks/test`, { method: 'POST', headers });
        expect(ping.status).toBe(200);
        made.push(((await ping.json()) as { id: string }).id);
      }
      for (const replica of [a, b]) {
        const log = (await (await fetch(`${replica.url}/__sandbox/webhooks/deliveries?event=ping`, { headers })).json()) as { deliveries: Array<{ id: string }> };
        expect(log.deliveries.map((d) => d.id)).toEqual([...made].reverse());
        // Page by page, through the other replica's cursor, the same order.
        const first = (await (await fetch(`${replica.url}/__sandbox/webhooks/deliveries?event=ping&limit=3`, { headers })).json()) as { deliveries: Array<{ id: string }>; next_cursor: string };
        const other = replica === a ? b : a;
        const rest = (await (await fetch(`${other.url}/__sandbox/webhooks/deliveries?event=ping&cursor=${encodeURIComponent(first.next_cursor)}`, { headers })).json()) as { deliveries: Array<{ id: string }> };
        expect([...first.deliveries, ...rest.deliveries].map((d) => d.id)).toEqual([...made].reverse());
      }
    } finally {
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 60_000);

  it('leave a replica of the version before, after one of them is killed, numbering its deliveries above every delivery made before', async () => {
    const receiver = await Receiver.start();
    const databaseUrl = await server.freshDatabase();
    const a = await replica(databaseUrl, receiver);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      // Pings made right before the kill: A had no time to read the database's clock again after them.
      for (let i = 0; i < 10; i++) expect((await fetch(`${a.url}/__sandbox/webhooks/test`, { method: 'POST', headers })).status).toBe(200);
      await a.stop('SIGKILL');
      // What a replica of the version before does for a delivery's rank (a rollback): the row's next value.
      const { rows } = await db.query<{ value: string }>(
        "INSERT INTO counters (name, value) VALUES ('delivery', 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value",
      );
      const { rows: made } = await db.query<{ seq: string }>('SELECT max(seq) AS seq FROM deliveries');
      expect(BigInt(rows[0]!.value)).toBeGreaterThan(BigInt(made[0]!.seq));
    } finally {
      await db.end();
      await a.stop().catch(() => undefined);
      await receiver.close();
    }
  }, 60_000);

  it('behind a proxy that alternates between them (the layout of compose.yaml), answer a client as one sandbox', async () => {
    const receiver = await Receiver.start();
    const [a, b] = await twoReplicas(await server.freshDatabase(), receiver);
    const proxy = await roundRobinProxy([a.url, b.url]);
    try {
      const orders: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        const res = await fetch(`${proxy.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
        expect(res.status).toBe(201);
        orders.push(...((await res.json()) as { order_numbers: string[] }).order_numbers);
      }
      expect(new Set(orders).size).toBe(6);
      for (const orderNo of orders) {
        const detail = await until(
          async () => (await (await fetch(`${proxy.url}/__sandbox/orders/${orderNo}`, { headers })).json()) as { awb: string | null },
          (order) => order.awb !== null,
        );
        expect(detail.awb).toMatch(/^JN\d{10}$/);
      }
      const listed = (await (await fetch(`${proxy.url}/__sandbox/orders?limit=100`, { headers })).json()) as { orders: unknown[]; total: number };
      expect(listed.orders).toHaveLength(6);
      expect(proxy.served.every((n) => n > 3)).toBe(true);
      const health = await fetch(`${proxy.url}/__sandbox/health`);
      expect(((await health.json()) as { status: string }).status).toBe('ok');
    } finally {
      await proxy.close();
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 60_000);

  it("resolve an advance through one replica only once the client's due jobs the other holds are done (a webhook attempt in flight)", async () => {
    const receiver = await Receiver.start();
    // The receiver never answers: an attempt runs until its 4 s timeout.
    let attemptAt: number | undefined;
    receiver.respond = () => {
      attemptAt ??= Date.now();
      return { status: 200, hang: true };
    };
    const databaseUrl = await server.freshDatabase();
    const flags = ['--webhook-timeout', '4s', '--webhook-retries', '10m'];
    const replicas = await Promise.all([replica(databaseUrl, receiver, flags), replica(databaseUrl, receiver, flags)]);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const created = await fetch(`${replicas[0].url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      expect(created.status).toBe(201);
      await until(async () => receiver.received.length, (n) => n >= 1);
      // The replica whose worker holds the attempt (worker ids name their process); the advance goes through the other.
      const { rows } = await db.query<{ claimed_by: string }>(`SELECT claimed_by FROM jobs WHERE kind = 'webhook' AND claimed_by IS NOT NULL`);
      expect(rows).toHaveLength(1);
      const holder = replicas.findIndex((r) => rows[0]!.claimed_by.startsWith(`worker_${r.process.pid}_`));
      expect(holder).toBeGreaterThanOrEqual(0);
      const other = replicas[1 - holder]!;
      expect(Date.now() - attemptAt!).toBeLessThan(3_000);
      const advanced = await fetch(`${other.url}/__sandbox/clock/advance`, { method: 'POST', headers, body: JSON.stringify({ ms: 1_000 }) });
      const resolvedAt = Date.now();
      expect(advanced.status).toBe(200);
      // Not before the holder's attempt ended (timed out 4 s after it began); the attempt is recorded when it resolves.
      expect(resolvedAt - attemptAt!).toBeGreaterThanOrEqual(3_900);
      const listed = (await (await fetch(`${other.url}/__sandbox/webhooks/deliveries`, { headers })).json()) as { deliveries: Array<{ event: string; attempts: unknown[] }> };
      const awb = listed.deliveries.filter((d) => d.event === 'awb.generated');
      expect(awb).toHaveLength(1);
      expect(awb[0]!.attempts).toHaveLength(1);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await db.end();
      for (const r of replicas) await r.stop();
      await receiver.close();
    }
  }, 60_000);

  it('finish, on the surviving replica, the jobs a replica held when it was killed: every AWB and webhook, a repeated webhook with the same id', async () => {
    const receiver = await Receiver.start();
    // The receiver holds every webhook until the crash: replica A dies with its attempts in flight.
    let holding = true;
    receiver.respond = () => (holding ? { status: 200, hang: true } : { status: 200, body: 'ok' });
    const databaseUrl = await server.freshDatabase();
    const lease = ['--job-lease', '3s', '--webhook-timeout', '1s', '--awb-delay', '1s'];
    const a = await replica(databaseUrl, receiver, lease);
    let b: RunningCli | undefined;
    try {
      const first = await fetch(`${a.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(20)) });
      expect(first.status).toBe(201);
      const orders = ((await first.json()) as { order_numbers: string[] }).order_numbers;
      await until(async () => receiver.received.length, (n) => n >= 8); // A's attempts in flight (8 per client at once)
      // Orders acknowledged just before the crash, their AWBs not due yet (1 s).
      const late = await fetch(`${a.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(5)) });
      expect(late.status).toBe(201);
      orders.push(...((await late.json()) as { order_numbers: string[] }).order_numbers);
      const inFlight = new Set(receiver.received.map((r) => r.id));
      await a.stop('SIGKILL');
      holding = false;

      b = await replica(databaseUrl, receiver, lease);
      const awbWebhooks = () => receiver.received.filter((r) => r.json.event === 'awb.generated');
      // Done when every order has its AWB webhook and every attempt A had in flight was made again.
      const done = () => new Set(awbWebhooks().map((r) => r.json.order_no)).size >= orders.length && [...inFlight].every((id) => receiver.byId(id).length > 1);
      await until(async () => done(), (finished) => finished, 60_000);
      const byOrder = new Map<unknown, Set<string>>();
      for (const r of awbWebhooks()) byOrder.set(r.json.order_no, (byOrder.get(r.json.order_no) ?? new Set()).add(r.id));
      // Every acknowledged order got its AWB webhook, each order under one webhook id however often it came.
      expect([...byOrder.keys()].sort()).toEqual([...orders].sort());
      expect([...byOrder.values()].every((ids) => ids.size === 1)).toBe(true);
      // The attempts A had in flight were made again by B, under the same ids.
      for (const id of inFlight) expect(receiver.byId(id).length).toBeGreaterThan(1);
      for (const orderNo of orders) {
        const detail = (await (await fetch(`${b.url}/__sandbox/orders/${orderNo}`, { headers })).json()) as { awb: string | null };
        expect(detail.awb).toMatch(/^JN\d{10}$/);
      }
    } finally {
      await a.stop().catch(() => undefined);
      await b?.stop();
      await receiver.close();
    }
  }, 120_000);
});
