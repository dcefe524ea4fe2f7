import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/app/sandbox.js';
import { startCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { deliveries, webhookSandbox } from '../webhooks/support.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

describe('the sandbox on PostgreSQL (--database-url)', () => {
  it('creates, lists, tracks and cancels orders, generates AWBs, sends the signed webhook and keeps it all across a restart', async () => {
    const url = await server.freshDatabase();
    const receiver = await Receiver.start();
    let sandbox = await webhookSandbox(receiver.url, { databaseUrl: url });
    try {
      const created = await sandbox.call('POST', '/v1/order', { body: createRequest(2) });
      expect(created.status).toBe(201);
      const [first, second] = created.body.order_numbers as string[];
      expect((await sandbox.call('GET', `/__sandbox/orders/${first}`)).body).toMatchObject({ status: 'created', awb: null });

      await sandbox.advance(60_000);
      const detail = (await sandbox.call('GET', `/__sandbox/orders/${first}`)).body;
      expect(detail).toMatchObject({ status: 'awb_generated', awb: expect.stringMatching(/^JN\d{10}$/) });
      const sent = await deliveries(sandbox);
      expect(sent.map((d) => [d.event, d.status])).toEqual([
        ['awb.generated', 'delivered'],
        ['awb.generated', 'delivered'],
      ]);
      expect(receiver.received).toHaveLength(2);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(2);

      const listing = await sandbox.call('GET', '/__sandbox/orders?limit=1');
      expect(listing.body.orders).toHaveLength(1);
      expect(listing.body.next_cursor).toEqual(expect.any(String));
      expect((await sandbox.call('GET', '/__sandbox/orders?limit=10', { token: TOKEN_B })).body.orders).toEqual([]);
      // Another partner finds none of them, by number or by AWB, and cannot cancel one.
      expect((await sandbox.call('GET', `/v1/order/tracking/${detail.awb}`, { token: TOKEN_B })).status).toBe(404);
      expect((await sandbox.call('GET', `/__sandbox/orders/${first}`, { token: TOKEN_B })).status).toBe(404);
      expect((await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: second }, token: TOKEN_B })).status).toBe(404);

      const cancelled = await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: second } });
      expect(cancelled.status).toBe(200);

      await sandbox.advance(3 * 24 * 3600_000);
      const tracking = await sandbox.call('GET', `/v1/order/tracking/${detail.awb}`);
      expect(tracking.status).toBe(200);
      expect(tracking.body.history.length).toBeGreaterThan(1);

      await sandbox.close();
      sandbox = await webhookSandbox(receiver.url, { databaseUrl: url });
      expect((await sandbox.call('GET', `/__sandbox/orders/${second}`)).body.status).toBe('cancelled');
      // The same history (pod_photo URLs name the address they were fetched from, which changed).
      const entries = (history: Array<{ note: string; update_on: number; status: string | null }>) => history.map((h) => [h.note, h.update_on, h.status]);
      expect(entries((await sandbox.call('GET', `/v1/order/tracking/${detail.awb}`, { token: TOKEN_A })).body.history)).toEqual(entries(tracking.body.history));
      expect(await deliveries(sandbox, '&event=awb.generated')).toHaveLength(2);
    } finally {
      await sandbox.close();
      await receiver.close();
    }
  });

  it("finishes a reset whose client hung up at once (the listings of its removals are not a read to cut short), and a create's retention", async () => {
    const sandbox = await createSandbox({ port: 0, databaseUrl: await server.freshDatabase(), tokens: ['hang-up'], clock: 'manual', logLevel: 'silent' });
    const call = (method: string, path: string, body?: unknown, signal?: AbortSignal) =>
      fetch(`${sandbox.url}${path}`, { method, headers: { authorization: 'Bearer hang-up', 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(signal ? { signal } : {}) });
    const total = async () => ((await (await call('GET', '/__sandbox/orders?limit=1')).json()) as { total: number }).total;
    try {
      for (let i = 0; i < 12; i += 1) expect((await call('POST', '/v1/order', createRequest(100))).status).toBe(201);
      // More than two pages of removals (500 each): the client gives up as soon as they begin (not
      // before its turn: a request whose client left while it waited is not carried out at all).
      const gaveUp = new AbortController();
      const { orders } = sandbox.services;
      const removeAll = orders.removeAll.bind(orders);
      orders.removeAll = (client) => {
        gaveUp.abort();
        return removeAll(client);
      };
      await call('POST', '/__sandbox/reset', undefined, gaveUp.signal).catch(() => undefined);
      expect(gaveUp.signal.aborted).toBe(true);
      for (const end = Date.now() + 20_000; (await total()) > 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
      expect(await total()).toBe(0);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('warns at the start of a replica whose clients differ from those of the replica that started last, not of one whose agree in any order, and keeps their digest keyed by the database', async () => {
    const [url, elsewhereUrl] = [await server.freshDatabase(), await server.freshDatabase()];
    const replica = (at: string, ...tokens: string[]) => startCli(['--port', '0', '--database-url', at, ...tokens.flatMap((t) => ['--token', t]), '--log-level', 'warn']);
    const keptDigest = async (at: string) => {
      const db = new pg.Client({ connectionString: at });
      await db.connect();
      try {
        return (await db.query<{ value: { hmac: string } }>("SELECT value FROM meta WHERE key = 'clients_hmac'")).rows[0]?.value.hmac;
      } finally {
        await db.end();
      }
    };
    const warning = /the clients of this replica .* differ from those of the replica that started last/;
    const first = await replica(url, 'token-one', 'token-two');
    // A replica of an older version keeps its unkeyed digest under a key of its own, which this version leaves alone.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(`INSERT INTO meta (key, value) VALUES ('clients_config', '{"digest": "older", "at": "2026-01-01T00:00:00.000Z"}')`);
    await db.end();
    const same = await replica(url, 'token-two', 'token-one');
    const elsewhere = await replica(elsewhereUrl, 'token-one', 'token-two');
    const other = await replica(url, 'token-three');
    try {
      expect(first.output()).not.toMatch(warning);
      expect(same.output()).not.toMatch(warning);
      expect(other.output()).toMatch(warning);
      expect(other.output()).not.toContain('token-one');
      const [here, there] = [await keptDigest(url), await keptDigest(elsewhereUrl)];
      expect(here).toMatch(/^[0-9a-f]{64}$/);
      expect(there).toMatch(/^[0-9a-f]{64}$/);
      // The same clients, kept under each database's own secret.
      expect(here).not.toBe(there);
    } finally {
      await Promise.all([first.stop(), same.stop(), elsewhere.stop(), other.stop()]);
    }
  }, 60_000);

  it('warns at the start of a replica whose --clock differs from that of the replica that started last, not of one whose is the same', async () => {
    const url = await server.freshDatabase();
    const replica = (clock: string) => startCli(['--port', '0', '--database-url', url, '--token', 'token-one', '--clock', clock, '--log-level', 'warn']);
    const warning = /the clock of this replica \(--clock (\w+)\) differs from that of the replica that started last, at \S+ \(--clock (\w+)\): every replica of a shared database needs the same --clock/;
    const first = await replica('manual');
    const same = await replica('manual');
    const other = await replica('real');
    try {
      expect(first.output()).not.toMatch(warning);
      expect(same.output()).not.toMatch(warning);
      expect(other.output().match(warning)?.slice(1)).toEqual(['real', 'manual']);
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        expect((await db.query("SELECT value FROM meta WHERE key = 'clock_mode'")).rows[0]?.value).toMatchObject({ mode: 'real' });
      } finally {
        await db.end();
      }
    } finally {
      await Promise.all([first.stop(), same.stop(), other.stop()]);
    }
  }, 60_000);

  it('warns at the start of a replica whose --speed differs from that of the start before it, which it then sets for every replica', async () => {
    const url = await server.freshDatabase();
    const replica = (speed: string) => startCli(['--port', '0', '--database-url', url, '--token', 'token-one', '--speed', speed, '--log-level', 'warn']);
    const warning = /the --speed of this replica \((\d+)\) differs from that of the start before it \((\d+)\): the real clock runs at \d+ on every replica of this database from now on/;
    const first = await replica('1');
    const same = await replica('1');
    const other = await replica('60');
    try {
      expect(first.output()).not.toMatch(warning);
      expect(same.output()).not.toMatch(warning);
      expect(other.output().match(warning)?.slice(1)).toEqual(['60', '1']);
      const clock = (await (await fetch(`${first.url}/__sandbox/clock`, { headers: { authorization: 'Bearer token-one' } })).json()) as { speed: number };
      expect(clock.speed).toBe(60);
    } finally {
      await Promise.all([first.stop(), same.stop(), other.stop()]);
    }
  }, 60_000);

  it('numbers orders, batches and AWBs exactly as the embedded store does under one --seed (one replica)', async () => {
    /** Three batches of four orders (couriers of the spec's example), a minute of clock, and what came of it. */
    const journey = async (sandbox: TestSandbox) => {
      const batches: unknown[] = [];
      for (let i = 0; i < 3; i += 1) batches.push((await sandbox.call('POST', '/v1/order', { body: createRequest(4) })).body);
      await sandbox.advance(60_000);
      const orders = (await sandbox.call('GET', '/__sandbox/orders?limit=100')).body.orders as { order_no: string; awb: string | null; batch_id: string }[];
      await sandbox.close();
      return { batches, orders: orders.map((o) => [o.order_no, o.batch_id, o.awb]) };
    };
    const onPostgres = await journey(await testSandbox({ seed: 'same-seed', databaseUrl: await server.freshDatabase() }));
    const embedded = await journey(await testSandbox({ seed: 'same-seed' }));
    expect(onPostgres.orders).toHaveLength(12);
    expect(onPostgres.orders.every(([, , awb]) => typeof awb === 'string')).toBe(true);
    expect(onPostgres).toEqual(embedded);
  });
});
