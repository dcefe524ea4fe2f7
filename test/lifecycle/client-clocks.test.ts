import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { onPostgres } from '../support/store-kind.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';
import { Receiver } from '../webhooks/receiver.js';
import { createOrders, deliveries } from '../webhooks/support.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const dir = tempDir();

let sandbox: TestSandbox | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(status: number): Promise<Receiver> {
  const r = await Receiver.start();
  r.respond = () => ({ status, body: status === 200 ? 'ok' : 'down' });
  receivers.push(r);
  return r;
}

/** Two clients, each with its own receiver; the default retry schedule. */
function twoClients(urls: { a: string; b: string }, options: Parameters<typeof testSandbox>[0] = {}): Promise<TestSandbox> {
  return testSandbox({
    clients: [
      { token: TOKEN_A, id: 'client-a', webhook: { url: urls.a } },
      { token: TOKEN_B, id: 'client-b', webhook: { url: urls.b } },
    ],
    ...options,
  });
}

const clockOf = async (s: TestSandbox, token: string) => (await s.call('GET', '/__sandbox/clock', { token })).body;
const orderOf = async (s: TestSandbox, orderNo: string, token: string) => (await s.call('GET', `/__sandbox/orders/${orderNo}`, { token })).body;
const advance = (s: TestSandbox, ms: number, token: string) => s.call('POST', '/__sandbox/clock/advance', { token, body: { ms } });

describe('a clock per client (manual clocks)', () => {
  it("A's 3-day advance delivers A's order with its webhooks; B's order and B's pending retry are untouched; both clocks survive a restart", async () => {
    const up = await receiver(200);
    const down = await receiver(503);
    const data = join(dir(), 'sandbox.json');
    sandbox = await twoClients({ a: up.url, b: down.url }, { data });

    const [orderA] = await createOrders(sandbox, 1, {}, TOKEN_A);
    const [orderB] = await createOrders(sandbox, 1, {}, TOKEN_B);
    // B gets a delivery with a retry pending: an AWB generated now, its first attempt refused by B's receiver.
    const [orderB2] = await createOrders(sandbox, 1, {}, TOKEN_B);
    expect((await sandbox.call('POST', `/__sandbox/orders/${orderB2}/awb`, { token: TOKEN_B })).status).toBe(200);
    expect((await advance(sandbox, 1_000, TOKEN_B)).status).toBe(200);
    const [pendingB] = await deliveries(sandbox, '', TOKEN_B);
    expect(pendingB).toMatchObject({ status: 'pending', attempts: [{ status_code: 503 }] });
    expect(pendingB!.next_attempt_at).not.toBeNull();

    const orderBBefore = await orderOf(sandbox, orderB!, TOKEN_B);
    const clockBBefore = await clockOf(sandbox, TOKEN_B);
    const clockABefore = await clockOf(sandbox, TOKEN_A);
    const receivedByB = down.received.length;

    const res = await advance(sandbox, 3 * DAY, TOKEN_A);
    expect(res.status).toBe(200);
    expect(res.body.now_ms).toBe(clockABefore.now_ms + 3 * DAY);

    // A: delivered, and every webhook of it sent to A's receiver.
    expect((await orderOf(sandbox, orderA!, TOKEN_A)).status).toBe('delivered');
    const sentA = await deliveries(sandbox, '', TOKEN_A);
    expect(sentA.length).toBeGreaterThan(0);
    expect(sentA.every((d) => d.status === 'delivered')).toBe(true);
    expect(up.received.map((w) => w.json.order_no)).toContain(orderA);

    // B: nothing moved.
    expect(await orderOf(sandbox, orderB!, TOKEN_B)).toEqual(orderBBefore);
    expect(orderBBefore).toMatchObject({ status: 'created', awb: null });
    const [stillPending] = await deliveries(sandbox, '', TOKEN_B);
    expect(stillPending).toMatchObject({ id: pendingB!.id, status: 'pending', next_attempt_at: pendingB!.next_attempt_at });
    expect(stillPending!.attempts).toHaveLength(1);
    expect(down.received.length).toBe(receivedByB);
    expect(await clockOf(sandbox, TOKEN_B)).toEqual(clockBBefore);

    // Both clocks survive a restart on the same data file.
    const clockA = (await clockOf(sandbox, TOKEN_A)).now_ms;
    const clockB = (await clockOf(sandbox, TOKEN_B)).now_ms;
    expect(clockA - clockB).toBe(3 * DAY - 1_000);
    await sandbox.close();
    sandbox = await twoClients({ a: up.url, b: down.url }, { data });
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBe(clockA);
    expect((await clockOf(sandbox, TOKEN_B)).now_ms).toBe(clockB);
    expect((await orderOf(sandbox, orderB!, TOKEN_B)).status).toBe('created');
    expect((await deliveries(sandbox, '', TOKEN_B))[0]!.attempts).toHaveLength(1);
  }, 60_000);

  it("GET /__sandbox/clock shows the caller's time and only the caller's pending jobs", async () => {
    sandbox = await testSandbox();
    await createOrders(sandbox, 3, {}, TOKEN_A);
    const a = await clockOf(sandbox, TOKEN_A);
    const b = await clockOf(sandbox, TOKEN_B);
    expect(a).toMatchObject({ mode: 'manual', pending_jobs: 3 });
    expect(a.next_due).not.toBeNull();
    expect(b).toMatchObject({ mode: 'manual', pending_jobs: 0, next_due: null });
  });

  it('runs advances of one client one at a time: two concurrent advances add up', async () => {
    sandbox = await testSandbox();
    const start = (await clockOf(sandbox, TOKEN_A)).now_ms;
    const [first, second] = await Promise.all([advance(sandbox, HOUR, TOKEN_A), advance(sandbox, HOUR, TOKEN_A)]);
    expect([first.body.now_ms, second.body.now_ms].sort()).toEqual([start + HOUR, start + 2 * HOUR]);
    expect((await clockOf(sandbox, TOKEN_B)).now_ms).toBe(start);
  });

  it("stamps the caller's times on its own clock: an order created after A's advance is created at A's time, B's at B's", async () => {
    sandbox = await testSandbox();
    await advance(sandbox, DAY, TOKEN_A);
    const [orderA] = await createOrders(sandbox, 1, {}, TOKEN_A);
    const [orderB] = await createOrders(sandbox, 1, {}, TOKEN_B);
    const createdA = Date.parse((await orderOf(sandbox, orderA!, TOKEN_A)).created_at);
    const createdB = Date.parse((await orderOf(sandbox, orderB!, TOKEN_B)).created_at);
    expect(createdA - createdB).toBe(DAY);
  });

  it("keeps the client's clock and id counters through a reset", async () => {
    sandbox = await testSandbox();
    await advance(sandbox, DAY, TOKEN_A);
    const before = (await clockOf(sandbox, TOKEN_A)).now_ms;
    const fault = { action: { type: 'status', status: 503 } };
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: fault })).body.id).toBe('fault_1');
    expect((await sandbox.call('POST', '/__sandbox/reset')).status).toBe(200);
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBe(before);
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: fault })).body.id).toBe('fault_2');
  });
});

describe('a clock per client (real clock)', () => {
  it("an advance jumps only the caller's clock: its AWB falls due at once, stamped with its due time; another client's waits", async () => {
    sandbox = await testSandbox({ clock: 'real', awbDelay: '1h' });
    const [orderA] = await createOrders(sandbox, 1, {}, TOKEN_A);
    const [orderB] = await createOrders(sandbox, 1, {}, TOKEN_B);
    const res = await advance(sandbox, 2 * HOUR, TOKEN_A);
    expect(res.status).toBe(200);
    const a = await orderOf(sandbox, orderA!, TOKEN_A);
    expect(a.status).not.toBe('created');
    expect(a.awb_generated_at).toBe(a.awb_due_at);
    expect((await orderOf(sandbox, orderB!, TOKEN_B)).status).toBe('created');
    const b = (await clockOf(sandbox, TOKEN_B)).now_ms; // read first: A's is read later, never earlier
    const ahead = (await clockOf(sandbox, TOKEN_A)).now_ms - b;
    expect(ahead).toBeGreaterThanOrEqual(2 * HOUR);
    expect(ahead).toBeLessThan(2 * HOUR + 60_000);
  });

  it("wakes for a job at the wall time the jumped client's clock reaches it", async () => {
    sandbox = await testSandbox({ clock: 'real', awbDelay: '1h' });
    const [orderA] = await createOrders(sandbox, 1, {}, TOKEN_A);
    const [orderB] = await createOrders(sandbox, 1, {}, TOKEN_B);
    await advance(sandbox, HOUR - 3_000, TOKEN_A); // A's AWB is now due in three seconds of wall time
    expect((await orderOf(sandbox, orderA!, TOKEN_A)).status).toBe('created');
    const started = Date.now();
    while ((await orderOf(sandbox, orderA!, TOKEN_A)).status === 'created' && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 50));
    const a = await orderOf(sandbox, orderA!, TOKEN_A);
    expect(a.status).toBe('awb_generated');
    expect(Date.parse(a.awb_generated_at) - Date.parse(a.awb_due_at)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(a.awb_generated_at) - Date.parse(a.awb_due_at)).toBeLessThan(2_000);
    expect((await orderOf(sandbox, orderB!, TOKEN_B)).status).toBe('created');
  });

  it("keeps a client's jump across a restart", async () => {
    const data = join(dir(), 'sandbox.json');
    sandbox = await testSandbox({ clock: 'real', data });
    await advance(sandbox, DAY, TOKEN_A);
    await sandbox.close();
    sandbox = await testSandbox({ clock: 'real', data });
    const b = (await clockOf(sandbox, TOKEN_B)).now_ms;
    const ahead = (await clockOf(sandbox, TOKEN_A)).now_ms - b;
    expect(ahead).toBeGreaterThanOrEqual(DAY);
    expect(ahead).toBeLessThan(DAY + 60_000);
  });
});

// The data file's lock and a crash of its process: PostgreSQL keeps its clocks in the database from the start.
if (!onPostgres) describe('a real clock that ran faster, then a crash', () => {
  it('never moves back: it runs on from the kept base and pace, and a restart goes back to --speed without a jump', async () => {
    const data = join(dir(), 'sandbox.json');
    const ADMIN = 'clock-admin-token';
    const first = await testSandbox({ clock: 'real', data, awbDelay: '1h', adminTokens: [ADMIN] });
    try {
      expect((await first.call('PUT', '/__sandbox/clock/speed', { token: ADMIN, body: { speed: 100_000 } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300)); // about 8 hours of sandbox time
      const [orderNo] = await createOrders(first, 1, {}, TOKEN_A);
      const created = Date.parse((await orderOf(first, orderNo!, TOKEN_A)).created_at);
      const seen = { a: (await clockOf(first, TOKEN_A)).now_ms, b: (await clockOf(first, TOKEN_B)).now_ms };
      expect(seen.a - Date.now()).toBeGreaterThan(4 * HOUR);
      // As a SIGKILL leaves it: nothing saved at a stop.
      crash(data);
      sandbox = await testSandbox({ clock: 'real', data, awbDelay: '1h', adminTokens: [ADMIN] });
      const a = await clockOf(sandbox, TOKEN_A);
      expect(a.now_ms).toBeGreaterThanOrEqual(seen.a);
      expect((await clockOf(sandbox, TOKEN_B)).now_ms).toBeGreaterThanOrEqual(seen.b);
      expect(a.now_ms).toBeGreaterThan(created);
      expect(a.speed).toBe(1);
      // Back at wall pace: a second of wall time is about a second of the clock's.
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await clockOf(sandbox, TOKEN_A)).now_ms - a.now_ms).toBeLessThan(5_000);
    } finally {
      await sandbox?.close();
      sandbox = undefined;
      await first.close().catch(() => undefined);
    }
  });
});

if (!onPostgres) describe('a real clock faster than wall time, stopped and started again', () => {
  it('resumes where it stood at the stop, not run on through it at its pace', async () => {
    const data = join(dir(), 'fast.json');
    const first = await testSandbox({ clock: 'real', speed: 3600, data, retention: '30d' });
    const [orderNo] = await createOrders(first, 1, {}, TOKEN_A);
    const stood = (await clockOf(first, TOKEN_A)).now_ms;
    await first.close();
    await new Promise((r) => setTimeout(r, 1_500)); // an hour and a half at the old pace
    sandbox = await testSandbox({ clock: 'real', speed: 3600, data, retention: '30d' });
    const now = (await clockOf(sandbox, TOKEN_A)).now_ms;
    expect(now).toBeGreaterThanOrEqual(stood);
    expect(now - stood).toBeLessThan(HOUR);
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).status).toBe(200);
  });
});

// A data file keeps its clocks; PostgreSQL keeps them in the database and warns of replicas with another --clock.
if (!onPostgres) describe('a data file started with the other --clock', () => {
  it('a manual clock after a real one starts where the real clocks stand, each client with its lead, and stays there at the next manual start', async () => {
    const data = join(dir(), 'real-then-manual.json');
    sandbox = await testSandbox({ clock: 'real', data });
    await advance(sandbox, DAY, TOKEN_A);
    const [ofA] = await createOrders(sandbox, 1, {}, TOKEN_A);
    const [ofB] = await createOrders(sandbox, 1, {}, TOKEN_B);
    const createdA = Date.parse((await orderOf(sandbox, ofA!, TOKEN_A)).created_at);
    const createdB = Date.parse((await orderOf(sandbox, ofB!, TOKEN_B)).created_at);
    await sandbox.close();
    sandbox = await testSandbox({ clock: 'manual', data });
    const a = (await clockOf(sandbox, TOKEN_A)).now_ms;
    const b = (await clockOf(sandbox, TOKEN_B)).now_ms;
    expect(b).toBeGreaterThanOrEqual(createdB);
    expect(a).toBeGreaterThanOrEqual(createdA);
    expect(a - b).toBeGreaterThanOrEqual(DAY);
    await sandbox.close();
    await new Promise((r) => setTimeout(r, 50));
    sandbox = await testSandbox({ clock: 'manual', data });
    expect([(await clockOf(sandbox, TOKEN_A)).now_ms, (await clockOf(sandbox, TOKEN_B)).now_ms]).toEqual([a, b]);
  });

  it('a real clock after a manual one kept ahead of wall time runs on from it, at the next real start too', async () => {
    const data = join(dir(), 'manual-then-real.json');
    const ahead = Date.parse('2030-01-01T00:00:00Z');
    sandbox = await testSandbox({ clock: 'manual', clockStart: '2030-01-01T00:00:00Z', data });
    await advance(sandbox, HOUR, TOKEN_A);
    const [ofB] = await createOrders(sandbox, 1, {}, TOKEN_B);
    const createdB = Date.parse((await orderOf(sandbox, ofB!, TOKEN_B)).created_at);
    expect(createdB).toBe(ahead);
    await sandbox.close();
    for (const start of ['first', 'second']) {
      sandbox = await testSandbox({ clock: 'real', data });
      expect((await clockOf(sandbox, TOKEN_B)).now_ms, start).toBeGreaterThanOrEqual(ahead);
      expect((await clockOf(sandbox, TOKEN_A)).now_ms, start).toBeGreaterThanOrEqual(ahead + HOUR);
      await sandbox.close();
    }
    sandbox = undefined;
  });
});

// A data file's migration (the embedded store's): a PostgreSQL database never had one clock, so no such test there.
if (!onPostgres) describe('a data file from before clocks were per client', () => {
  it("gives every client the one clock it had, and moves each on its own from there", async () => {
    const data = join(dir(), 'sandbox.json');
    const oneClock = Date.parse('2026-03-01T00:00:00Z');
    // Schema 2 as the sandbox wrote it with one manual clock: its position in meta, no clock per client.
    const old = { schema_version: 2, journal_generation: 0, meta: { seed: 'old', manual_clock_ms: oneClock }, orders: {}, deliveries: {}, clients: {}, counters: {}, jobs: {} };
    writeFileSync(data, JSON.stringify(old));
    sandbox = await testSandbox({ data });
    expect((await clockOf(sandbox, TOKEN_A)).now).toBe('2026-03-01T00:00:00.000Z');
    expect((await clockOf(sandbox, TOKEN_B)).now).toBe('2026-03-01T00:00:00.000Z');
    await advance(sandbox, HOUR, TOKEN_A);
    await sandbox.close();
    sandbox = await testSandbox({ data });
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBe(oneClock + HOUR);
    expect((await clockOf(sandbox, TOKEN_B)).now_ms).toBe(oneClock);
  });
});

describe('ids shown to a client are per client', () => {
  it("B's first fault rule is fault_1 however many rules A made", async () => {
    sandbox = await testSandbox();
    for (let i = 0; i < 3; i += 1) {
      const made = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path: `/v1/order/tracking/X${i}` }, action: { type: 'status', status: 503 } } });
      expect(made.body.id).toBe(`fault_${i + 1}`);
    }
    const res = await sandbox.call('POST', '/__sandbox/faults', { token: TOKEN_B, body: { action: { type: 'status', status: 503 } } });
    expect(res.status).toBe(201);
    expect(res.body.id).toBe('fault_1');
  });

  it("B's first journal entry has id 1 however many requests A made", async () => {
    sandbox = await testSandbox();
    for (let i = 0; i < 3; i += 1) await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    await sandbox.call('POST', '/v1/order', { token: TOKEN_B, body: createRequest(1) });
    let entries: Array<{ id: number }> = [];
    for (let tries = 0; tries < 50 && entries.length === 0; tries += 1) {
      entries = (await sandbox.call('GET', '/__sandbox/requests', { token: TOKEN_B })).body.requests;
      if (entries.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(entries.map((e) => e.id)).toEqual([1]);
  });

  it("B's first delivery has the same id whether or not A had deliveries before it", async () => {
    const up = await receiver(200);
    const firstDeliveryOfB = async (aFirst: boolean): Promise<string> => {
      const s = await twoClients({ a: up.url, b: up.url });
      try {
        if (aFirst) {
          await createOrders(s, 3, {}, TOKEN_A);
          await advance(s, HOUR, TOKEN_A);
          expect(await deliveries(s, '', TOKEN_A)).toHaveLength(3);
        }
        await createOrders(s, 1, {}, TOKEN_B);
        await advance(s, HOUR, TOKEN_B);
        const [first] = await deliveries(s, '', TOKEN_B);
        return first!.id;
      } finally {
        await s.close();
      }
    };
    expect(await firstDeliveryOfB(true)).toBe(await firstDeliveryOfB(false));
  }, 30_000);
});

describe('the latest time a clock can show', () => {
  const YEAR = 365 * DAY;
  // Past year 9999 a time is no RFC 3339 date-time, and past 8.64e15 ms no date at all: a clock there answered 500 to every request showing a time.
  const LAST_SHOWN = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

  it('refuses an advance past it with 400 naming ms, leaves the clock where it stood, and keeps answering', async () => {
    const ADMIN = 'latest-admin-token';
    // The latest --clock-start: a century before the last time shown.
    const start = LAST_SHOWN - 100 * 365.25 * DAY;
    sandbox = await testSandbox({ clockStart: new Date(start).toISOString(), adminTokens: [ADMIN] });
    // Ninety years in one-year steps are taken; the step that would pass the last ten years is not.
    for (let i = 0; i < 90; i++) expect((await advance(sandbox, YEAR, TOKEN_A)).status).toBe(200);
    const stood = (await clockOf(sandbox, TOKEN_A)).now_ms;
    const refused = await advance(sandbox, YEAR, TOKEN_A);
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ field: 'ms', message: expect.stringMatching(/^would move the clock past 9989-12-3\dT.*Z, the latest time the sandbox can show/) }]);
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBe(stood);
    // An admin's advance-all is judged by the sandbox's own clock: one partner near the end does not block it, and stops at the latest time.
    expect((await sandbox.call('POST', '/__sandbox/clock/advance-all', { token: ADMIN, body: { ms: YEAR } })).status).toBe(200);
    expect((await clockOf(sandbox, TOKEN_B)).now_ms).toBe(start + YEAR);
    const latest = Date.parse('9989-12-31T00:00:00Z');
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBeGreaterThan(stood);
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBeLessThan(latest + 2 * DAY);
    // The sandbox's own clock then takes 89 more years, and not the 90th.
    for (let i = 0; i < 89; i++) expect((await sandbox.call('POST', '/__sandbox/clock/advance-all', { token: ADMIN, body: { ms: YEAR } })).status).toBe(200);
    const all = await sandbox.call('POST', '/__sandbox/clock/advance-all', { token: ADMIN, body: { ms: YEAR } });
    expect(all.status).toBe(400);
    expect(all.body.errors).toEqual([{ field: 'ms', message: expect.stringMatching(/^would move the clock past 9989-/) }]);
    // The client still creates and reads its orders.
    const [order] = await createOrders(sandbox, 1, {}, TOKEN_A);
    expect((await sandbox.call('GET', `/__sandbox/orders/${order}`, { token: TOKEN_A })).status).toBe(200);
    expect((await sandbox.call('GET', '/__sandbox/requests?limit=5', { token: TOKEN_A })).status).toBe(200);
  });

  // The check is the control API's, whatever the store: on PostgreSQL the 7,963 one-year advances that take the clock there outlast the test's time.
  it.skipIf(onPostgres)('takes {"ms": 0} from a real clock that ran past it, and refuses any more', async () => {
    sandbox = await testSandbox({ clock: 'real', speed: 100_000 });
    const latest = Date.parse('9989-12-31T11:59:59.999Z');
    // Client A's clock taken a year at a time to just short of the latest time, then run past it at the clock's pace.
    for (let from = (await clockOf(sandbox, TOKEN_A)).now_ms as number; from < latest - 60_000; from = (await clockOf(sandbox, TOKEN_A)).now_ms as number) {
      await sandbox.services.clockService.advance('client-a', Math.min(YEAR, latest - 60_000 - from));
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // 5,000 s of the client's time
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBeGreaterThan(latest);
    expect((await advance(sandbox, 0, TOKEN_A)).status).toBe(200);
    expect((await advance(sandbox, 1, TOKEN_A)).body.errors).toEqual([{ field: 'ms', message: expect.stringMatching(/^would move the clock past 9989-/) }]);
  });
});

describe('sandbox-wide clock operations (an admin)', () => {
  const ADMIN = 'clock-admin-token';

  it('POST /__sandbox/clock/advance-all moves every client on, each by ms; a partner gets 403', async () => {
    sandbox = await testSandbox({ adminTokens: [ADMIN] });
    const [orderA] = await createOrders(sandbox, 1, {}, TOKEN_A);
    const [orderB] = await createOrders(sandbox, 1, {}, TOKEN_B);
    expect((await advance(sandbox, HOUR, TOKEN_A)).status).toBe(200);
    const before = { a: (await clockOf(sandbox, TOKEN_A)).now_ms, b: (await clockOf(sandbox, TOKEN_B)).now_ms };
    expect((await sandbox.call('POST', '/__sandbox/clock/advance-all', { token: TOKEN_A, body: { ms: DAY } })).status).toBe(403);
    const res = await sandbox.call('POST', '/__sandbox/clock/advance-all', { token: ADMIN, body: { ms: DAY } });
    expect(res.status).toBe(200);
    expect((await clockOf(sandbox, TOKEN_A)).now_ms).toBe(before.a + DAY);
    expect((await clockOf(sandbox, TOKEN_B)).now_ms).toBe(before.b + DAY);
    expect((await orderOf(sandbox, orderA!, TOKEN_A)).status).not.toBe('created');
    expect((await orderOf(sandbox, orderB!, TOKEN_B)).status).not.toBe('created');
  });

  it('PUT /__sandbox/clock/speed sets the real clock’s pace from now on, without a jump; 409 on a manual clock; a partner gets 403', async () => {
    const manual = await testSandbox({ adminTokens: [ADMIN] });
    try {
      const refused = await manual.call('PUT', '/__sandbox/clock/speed', { token: ADMIN, body: { speed: 60 } });
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/manual clock has no speed/);
    } finally {
      await manual.close();
    }
    sandbox = await testSandbox({ clock: 'real', awbDelay: '1h', adminTokens: [ADMIN] });
    const [orderA] = await createOrders(sandbox, 1, {}, TOKEN_A);
    expect((await sandbox.call('PUT', '/__sandbox/clock/speed', { token: TOKEN_A, body: { speed: 3600 } })).status).toBe(403);
    expect((await sandbox.call('PUT', '/__sandbox/clock/speed', { token: ADMIN, body: { speed: 0 } })).status).toBe(400);
    const before = (await clockOf(sandbox, TOKEN_A)).now_ms;
    const res = await sandbox.call('PUT', '/__sandbox/clock/speed', { token: ADMIN, body: { speed: 3600 } });
    expect(res.status).toBe(200);
    expect(res.body.speed).toBe(3600);
    // No jump: the time goes on from where it was (well under the hour a jump would be).
    expect((await clockOf(sandbox, TOKEN_A)).now_ms - before).toBeLessThan(HOUR / 2);
    // An hour of sandbox time is a second of wall time now: the AWB falls due within a few seconds.
    const started = Date.now();
    while ((await orderOf(sandbox, orderA!, TOKEN_A)).status === 'created' && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 100));
    expect((await orderOf(sandbox, orderA!, TOKEN_A)).status).toBe('awb_generated');
  });
});
