import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxOptions } from '../../src/config/options.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { createRequest } from '../support/orders.js';
import { createOrders, deliveries } from '../webhooks/support.js';
import { Receiver } from '../webhooks/receiver.js';

const ADMIN = 'clocks-admin-token';
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(() => server?.stop());

const open = new Set<TestSandbox>();
afterEach(async () => {
  for (const s of open) await s.close();
  open.clear();
});

/** Two sandboxes on one fresh database: two replicas of one sandbox (manual clocks unless told). */
async function twoReplicas(options: SandboxOptions = {}): Promise<[TestSandbox, TestSandbox]> {
  const databaseUrl = await server.freshDatabase();
  const a = await testSandbox({ databaseUrl, adminTokens: [ADMIN], ...options });
  open.add(a);
  const b = await testSandbox({ databaseUrl, adminTokens: [ADMIN], ...options });
  open.add(b);
  return [a, b];
}

const clockOf = async (s: TestSandbox, token = TOKEN_A) => (await s.call('GET', '/__sandbox/clock', { token })).body as { now_ms: number; speed: number; pending_jobs: number };
const orderOf = async (s: TestSandbox, orderNo: string, token = TOKEN_A) => (await s.call('GET', `/__sandbox/orders/${orderNo}`, { token })).body;
const advance = (s: TestSandbox, ms: number, token = TOKEN_A) => s.call('POST', '/__sandbox/clock/advance', { token, body: { ms } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('clocks shared by replicas on PostgreSQL', () => {
  it("an advance through A is seen at once through B: the client's clock, B's new orders' times, the AWB and tracking the advance made, B's next advance", async () => {
    const [a, b] = await twoReplicas();
    const [order] = await createOrders(a, 1);
    const start = (await clockOf(b)).now_ms;
    const startB = (await clockOf(b, TOKEN_B)).now_ms;

    const advanced = await advance(a, 3 * DAY);
    expect(advanced.status).toBe(200);
    expect(advanced.body.now_ms).toBe(start + 3 * DAY);
    expect(await clockOf(b)).toMatchObject({ now_ms: start + 3 * DAY, pending_jobs: advanced.body.pending_jobs });
    expect((await clockOf(b, TOKEN_B)).now_ms).toBe(startB); // another client's clock did not move

    // The AWB and the delivered journey the advance ran, as B shows them.
    const detail = await orderOf(b, order!);
    expect(detail).toMatchObject({ status: 'delivered', awb: expect.stringMatching(/^JN\d{10}$/) });
    const tracking = await b.call('GET', `/v1/order/tracking/${detail.awb}`);
    expect(tracking.status).toBe(200);
    expect(tracking.body.history[0].status).toBe('2');

    // An order created through B is created at the client's time, and its AWB falls due a minute later on that clock.
    const [later] = await createOrders(b, 1);
    expect((await orderOf(b, later!)).created_at).toBe(new Date(start + 3 * DAY).toISOString());
    const onB = await advance(b, MINUTE);
    expect(onB.body.now_ms).toBe(start + 3 * DAY + MINUTE);
    expect(await orderOf(a, later!)).toMatchObject({ status: 'awb_generated', awb_generated_at: new Date(start + 3 * DAY + MINUTE).toISOString() });
    expect((await clockOf(a)).now_ms).toBe(start + 3 * DAY + MINUTE);
  }, 20_000);

  it('POST /__sandbox/clock/advance-all through A moves every client and the sandbox, as B shows at once', async () => {
    const [a, b] = await twoReplicas();
    expect((await advance(b, HOUR)).status).toBe(200);
    const before = { a: (await clockOf(a)).now_ms, b: (await clockOf(a, TOKEN_B)).now_ms, sandbox: a.services.clock.now() };
    expect((await a.call('POST', '/__sandbox/clock/advance-all', { token: ADMIN, body: { ms: DAY } })).status).toBe(200);
    expect((await clockOf(b)).now_ms).toBe(before.a + DAY);
    expect((await clockOf(b, TOKEN_B)).now_ms).toBe(before.b + DAY);
    // The sandbox's own clock (sandbox-wide work), as B runs it after a request read the clocks.
    expect(b.services.clock.now()).toBe(before.sandbox + DAY);
  });

  it("two advances of one client at once, through A and B, run one after the other: the clock moves by both and never back", async () => {
    const [a, b] = await twoReplicas();
    const start = (await clockOf(a)).now_ms;
    const answers = await Promise.all([a, b, a, b].map((s) => advance(s, HOUR)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // Each answer is the time its own advance left the clock at: one hour apart, none lost.
    expect(answers.map((r) => r.body.now_ms as number).sort((x, y) => x - y)).toEqual([1, 2, 3, 4].map((n) => start + n * HOUR));
    expect((await clockOf(a)).now_ms).toBe(start + 4 * HOUR);
    expect((await clockOf(b)).now_ms).toBe(start + 4 * HOUR);
  });

  it("while an advance through A plays the client's jobs, B's clock moves with it: nothing B shows happened after B's time", async () => {
    // A hundred AWBs due at as many times within the hour, each a step of the advance.
    const [a, b] = await twoReplicas({ awbDelay: '1s-1h' });
    await createOrders(a, 100);
    const start = (await clockOf(b)).now_ms;
    let done = false;
    const advancing = advance(a, HOUR).finally(() => (done = true));
    let during = 0;
    while (!done) {
      const orders = (await b.call('GET', '/__sandbox/orders?limit=100')).body.orders as { awb_generated_at: string | null }[];
      const now = (await clockOf(b)).now_ms;
      const made = orders.filter((o) => o.awb_generated_at !== null).map((o) => Date.parse(o.awb_generated_at!));
      if (!done && made.length > 0 && made.length < 100) during += 1;
      // Every AWB B lists was made at or before the time B reads after listing it.
      for (const at of made) expect(at).toBeLessThanOrEqual(now);
      expect(now).toBeGreaterThanOrEqual(start);
    }
    expect((await advancing).status).toBe(200);
    expect(during).toBeGreaterThan(0); // B read the clock while the advance was on its way
    expect((await clockOf(b)).now_ms).toBe(start + HOUR);
  }, 30_000);

  it('an advance the database stops part-way: a 503 saying how far it got, and A and B agree on the time once the database is back', async () => {
    // A job claimed as the database went away is another replica's again once its lease ends: a short one, so the rest of the way does not wait a minute.
    const [a, b] = await twoReplicas({ awbDelay: '1s-1h', jobLease: '3s' });
    await createOrders(a, 100);
    const start = (await clockOf(b)).now_ms;
    const advancing = advance(a, HOUR);
    // Paused once the advance has made some AWBs (B lists them as they are made).
    for (let i = 0; i < 400; i += 1) {
      const listed = (await b.call('GET', '/__sandbox/orders?status=awb_generated&limit=1')).body.total as number;
      if (listed > 0) break;
      await sleep(5);
    }
    await server.pause();
    const answer = await advancing;
    await server.resume();
    expect(answer.status).toBe(503);
    // The database went away at a step (the clock's write) or under a job there (its unit): either way it says where to look.
    expect(answer.body.message).toMatch(/^The advance stopped part-way.*GET \/__sandbox\/clock/);
    // And where it was to take the clock, so that a test can advance the rest of the way.
    expect(answer.body.message).toContain(`(it was to reach ${new Date(start + HOUR).toISOString()})`);
    // Within a few seconds both replicas read one time, which is at or after every AWB made.
    let clocks: number[] = [];
    for (const begun = Date.now(); Date.now() - begun < 10_000; await sleep(200)) {
      const read = await Promise.all([clockOf(a), clockOf(b)]);
      clocks = read.map((c) => c.now_ms);
      if (read.every((c) => c.now_ms !== undefined) && clocks[0] === clocks[1]) break;
    }
    expect(clocks[0]).toBe(clocks[1]);
    expect(clocks[0]!).toBeGreaterThanOrEqual(start);
    const orders = (await b.call('GET', '/__sandbox/orders?limit=100')).body.orders as { awb_generated_at: string | null }[];
    for (const o of orders) if (o.awb_generated_at !== null) expect(Date.parse(o.awb_generated_at)).toBeLessThanOrEqual(clocks[0]!);
    // The rest of the way: advancing again through B runs what is left.
    expect((await advance(b, start + HOUR - clocks[0]!)).status).toBe(200);
    expect((await b.call('GET', '/__sandbox/orders?status=created&limit=1')).body.total).toBe(0);
  }, 120_000);

  it('an advance whose webhook attempt cannot save what the receiver answered (the database stopped meanwhile) answers 503 within seconds, not when the attempt stops trying; the attempt saves it once the database is back, and the receiver gets the webhook once', async () => {
    const receiver = await Receiver.start();
    try {
      const clients = [
        { token: TOKEN_A, id: 'client-a', webhook: { url: receiver.url } },
        { token: TOKEN_B, id: 'client-b' },
      ];
      const [a] = await twoReplicas({ clients });
      await createOrders(a, 1);
      // The database stops while the receiver has the AWB webhook. The attempt keeps trying to save its outcome (for
      // 49 s with these options: a receiver must not get the webhook twice), and the advance must not wait for that.
      let stopped: Promise<void> | undefined;
      receiver.respond = () => {
        stopped = server.pause();
        return { status: 200, body: 'ok', delayMs: 200 };
      };
      const advancing = advance(a, MINUTE);
      const answer = await Promise.race([advancing, sleep(20_000).then(() => undefined)]);
      await stopped;
      await server.resume();
      expect(answer?.status).toBe(503);
      expect(answer?.body.message).toMatch(/^The advance stopped part-way.*could not be saved/);
      expect(receiver.received).toHaveLength(1);

      await expect.poll(async () => (await deliveries(a).catch(() => []))[0]?.status, { timeout: 15_000, interval: 250 }).toBe('delivered');
      expect((await advance(a, 0)).status).toBe(200);
      const [delivered] = await deliveries(a);
      expect(delivered!.attempts).toHaveLength(1);
      expect(receiver.received.map((webhook) => webhook.id)).toEqual([delivered!.id]);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it('an advance-all the database stops part-way: a 503 saying so, and A and B agree on every client\'s time once the database is back', async () => {
    const [a, b] = await twoReplicas({ awbDelay: '1s-1h', jobLease: '3s' });
    await createOrders(a, 100); // client A's jobs; client B has none
    const advancing = a.call('POST', '/__sandbox/clock/advance-all', { token: ADMIN, body: { ms: HOUR } });
    for (let i = 0; i < 400; i += 1) {
      if (((await b.call('GET', '/__sandbox/orders?status=awb_generated&limit=1')).body.total as number) > 0) break;
      await sleep(5);
    }
    await server.pause();
    const answer = await advancing;
    await server.resume();
    expect(answer.status).toBe(503);
    expect(answer.body.message).toMatch(/^The advance stopped part-way/);
    // [A's clock on a, B's on a, the sandbox's on a, the same on b]: each is one on both replicas (the sandbox's as each runs it after a request read the clocks).
    const times = async () => (await Promise.all([a, b].map(async (s) => [...(await Promise.all([TOKEN_A, TOKEN_B].map(async (token) => (await clockOf(s, token)).now_ms))), s.services.clock.now()]))).flat();
    let read: number[] = [];
    for (const begun = Date.now(); Date.now() - begun < 15_000; await sleep(250)) {
      read = await times().catch(() => []);
      if (read.length === 6 && read[0] === read[3] && read[1] === read[4] && read[2] === read[5]) break;
    }
    expect(read.slice(3)).toEqual(read.slice(0, 3));
  }, 120_000);

  it("a jump through A (real clock) moves the client's time on B, and B's scheduler runs its jobs when the jumped clock reaches them", async () => {
    const [a, b] = await twoReplicas({ clock: 'real', awbDelay: '1h' });
    const [order] = await createOrders(b, 1);
    const before = (await clockOf(b)).now_ms;
    expect((await advance(a, HOUR - 1_500)).status).toBe(200);
    const jumped = (await clockOf(b)).now_ms;
    expect(jumped - before).toBeGreaterThanOrEqual(HOUR - 1_500);
    expect(jumped - before).toBeLessThan(HOUR);
    expect((await clockOf(b, TOKEN_B)).now_ms - before).toBeLessThan(HOUR / 2);
    const [onB] = await createOrders(b, 1);
    expect(Date.parse((await orderOf(b, onB!)).created_at)).toBeGreaterThanOrEqual(jumped);
    // Only B is left: its timer wakes for the AWB, now due in about 1.5 s of wall time.
    await a.close();
    open.delete(a);
    const woke = Date.now();
    while ((await orderOf(b, order!)).status === 'created' && Date.now() - woke < 10_000) await sleep(50);
    expect((await orderOf(b, order!)).status).toBe('awb_generated');
    expect(Date.now() - woke).toBeLessThan(4_000);
  }, 20_000);

  it('PUT /__sandbox/clock/speed through A sets the pace B runs at, with no clock moving back on either', async () => {
    const [a, b] = await twoReplicas({ clock: 'real', awbDelay: '1h' });
    const [order] = await createOrders(b, 1);
    const before = (await clockOf(b)).now_ms;
    const fast = await a.call('PUT', '/__sandbox/clock/speed', { token: ADMIN, body: { speed: 3600 } });
    expect(fast.status).toBe(200);
    expect(fast.body.speed).toBe(3600);
    const onB = await clockOf(b);
    expect(onB.speed).toBe(3600);
    expect(onB.now_ms - before).toBeLessThan(HOUR / 2); // no jump
    await sleep(200);
    // 200 ms of wall time are over ten minutes at 3600x (more than the 200 s of a slower pace).
    expect((await clockOf(b)).now_ms - onB.now_ms).toBeGreaterThan(10 * MINUTE);
    // An hour of the client's time is a second of wall time now: its AWB falls due on B's scheduler as on A's.
    const woke = Date.now();
    while ((await orderOf(b, order!)).status === 'created' && Date.now() - woke < 10_000) await sleep(50);
    expect((await orderOf(b, order!)).status).toBe('awb_generated');

    // Slowed down again: every reading through either replica goes on from the last one.
    const readings: number[] = [];
    const read = async () => readings.push((await clockOf(readings.length % 2 ? a : b)).now_ms);
    await read();
    const slow = a.call('PUT', '/__sandbox/clock/speed', { token: ADMIN, body: { speed: 1 } });
    while (readings.length < 20) await read();
    expect((await slow).status).toBe(200);
    for (let i = 0; i < 10; i += 1) await read();
    expect(readings).toEqual([...readings].sort((x, y) => x - y));
    const settled = (await clockOf(b)).now_ms;
    await sleep(200);
    expect((await clockOf(b)).now_ms - settled).toBeLessThan(2_000);
    expect((await clockOf(b)).speed).toBe(1);
  }, 20_000);
});

// A request reads its client's clock and settings in one statement (see PostgresStorage.requestScope).
describe("a request's clock and settings, read together on PostgreSQL", () => {
  it('a fault rule added through A applies to the very next request through B, and B no longer faults once A removed it', async () => {
    const [a, b] = await twoReplicas();
    const added = await a.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 503 }, times: 5 } });
    expect(added.status).toBe(201);
    expect((await b.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(503);
    expect((await a.call('GET', '/__sandbox/faults')).body.rules).toMatchObject([{ id: added.body.id, remaining: 4 }]);
    expect((await a.call('DELETE', '/__sandbox/faults')).body).toEqual({ success: true, removed: 1 });
    expect((await b.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(201);
    expect((await b.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });

  it('a tracking read through B, whose order is read with its clock, shows each step A played just before; another client’s AWB and an unknown one stay 404', async () => {
    const [a, b] = await twoReplicas();
    const [order] = await createOrders(a, 1);
    const awb = (await a.call('POST', `/__sandbox/orders/${order}/awb`)).body.awb as string;
    for (let step = 0; step < 3; step += 1) {
      expect((await a.call('POST', `/__sandbox/orders/${order}/advance`)).status).toBe(200);
      const shown = (await orderOf(a, order!)).history.length;
      const tracking = await b.call('GET', `/v1/order/tracking/${awb}`);
      expect(tracking.status).toBe(200);
      expect(tracking.body.history).toHaveLength(shown);
    }
    expect((await b.call('GET', `/v1/order/tracking/${awb}`, { token: TOKEN_B })).status).toBe(404);
    expect((await b.call('GET', '/v1/order/tracking/JN0000000000')).status).toBe(404);
    // What cannot be an AWB is refused by validation, never sent with the clock read (a NUL byte failed that statement: a 500).
    const nul = await b.call('GET', '/v1/order/tracking/JN%00123');
    expect([nul.status, nul.body.errors?.[0]?.field]).toEqual([400, 'order_no']);
  });

  it("a rule's count taken by a request through B shows at once through A and through B's next request", async () => {
    const [a, b] = await twoReplicas();
    await a.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 503 }, times: 2 } });
    expect((await b.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(503);
    expect((await b.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(503);
    // Spent: neither replica answers with it any more.
    expect((await b.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(201);
    expect((await a.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(201);
    expect((await a.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });
});

describe('a reset the database stops part-way', () => {
  it('answers 503 saying it stopped part-way (not that nothing was saved), and run again removes the rest', async () => {
    const [a, b] = await twoReplicas();
    // Eight pages of 500: the database is stopped while the reset is on its way through them.
    for (let i = 0; i < 40; i += 1) await createOrders(a, 100);
    const resetting = a.call('POST', '/__sandbox/reset');
    // Paused once B no longer lists all of them: the reset has removed some.
    for (let i = 0; i < 1_000; i += 1) {
      if (((await b.call('GET', '/__sandbox/orders?limit=1')).body.total as number) < 4_000) break;
      await sleep(2);
    }
    await server.pause();
    const answer = await resetting;
    await server.resume();
    expect(answer.status).toBe(503);
    expect(answer.body.message).toMatch(/^The reset stopped part-way/);
    expect(answer.body.message).not.toMatch(/nothing was saved/);
    for (const begun = Date.now(); Date.now() - begun < 10_000; await sleep(200)) {
      const again = await a.call('POST', '/__sandbox/reset');
      if (again.status === 200) break;
    }
    expect((await b.call('GET', '/__sandbox/orders?limit=1')).body.total).toBe(0);
  }, 120_000);
});
