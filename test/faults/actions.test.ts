import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createSandbox } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';
import { defaultTestOptions, testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { ClientError, send, type SendOptions } from './http-client.js';

let sandbox: TestSandbox;
let server: Server;
let base: string;

beforeEach(async () => {
  sandbox = await testSandbox();
  server = await new Promise<Server>((resolve) => {
    const s = sandbox.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await sandbox.close();
});

async function addRule(rule: unknown, token = TOKEN_A): Promise<{ id: string }> {
  const res = await sandbox.call('POST', '/__sandbox/faults', { body: rule, token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const create = (options: SendOptions = {}) => send(base, '/v1/order', { method: 'POST', token: TOKEN_A, body: createRequest(1), ...options });
const failure = (promise: Promise<unknown>): Promise<ClientError> =>
  promise.then(
    () => {
      throw new Error('the request should have failed');
    },
    (error: unknown) => error as ClientError,
  );
const orderCount = async (token = TOKEN_A) => (await sandbox.call('GET', '/__sandbox/orders', { token })).body.total as number;

describe('fault action "status"', () => {
  it('answers the next N matching requests with the status and the error envelope, then expires', async () => {
    await addRule({ match: { operation_id: 'createOrder' }, action: { type: 'status', status: 503 }, times: 2 });
    for (let i = 0; i < 2; i++) {
      const seen = await create();
      expect(seen.status).toBe(503);
      expect(JSON.parse(seen.body)).toEqual({ success: false, message: expect.stringContaining('status 503'), errors: [] });
    }
    expect((await create()).status).toBe(201);
    expect(await orderCount()).toBe(1);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });

  it('answers with the body and headers given', async () => {
    await addRule({ action: { type: 'status', status: 502, body: { oops: true }, headers: { 'Retry-After': '7' } } });
    const seen = await create();
    expect([seen.status, JSON.parse(seen.body), seen.headers['retry-after']]).toEqual([502, { oops: true }, '7']);
  });

  it('leaves another client unaffected', async () => {
    await addRule({ action: { type: 'status', status: 500 }, times: 5 });
    expect((await create({ token: TOKEN_B })).status).toBe(201);
    expect((await create()).status).toBe(500);
  });
});

describe('fault action "latency"', () => {
  it('delays the answer by at least the configured ms, then answers as usual', async () => {
    await addRule({ action: { type: 'latency', ms: 300 } });
    const seen = await create();
    expect(seen.status).toBe(201);
    expect(seen.ms).toBeGreaterThanOrEqual(300);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });

  it('draws the delay from a range', async () => {
    await addRule({ action: { type: 'latency', ms: 150, max_ms: 250 } });
    const seen = await send(base, '/v1/order/tracking/SBXNOSUCH01', { token: TOKEN_A });
    expect(seen.status).toBe(404);
    expect(seen.ms).toBeGreaterThanOrEqual(150);
  });
});

describe('fault action "reset"', () => {
  it('resets the connection without answering or storing anything', async () => {
    await addRule({ action: { type: 'reset' } });
    const error = await failure(create());
    expect(['ECONNRESET', 'socket hang up']).toContain(error.code);
    expect(error.partial.status).toBeUndefined();
    expect(await orderCount()).toBe(0);
  });

  it('with after_ms, cuts a JSON answer mid-body once the operation has run', async () => {
    await addRule({ action: { type: 'reset', after_ms: 100 } });
    const error = await failure(create());
    expect(['ECONNRESET', 'ABORTED', 'socket hang up']).toContain(error.code);
    expect(error.partial.status).toBe(201);
    expect(() => JSON.parse(error.partial.body)).toThrow();
    expect(error.ms).toBeGreaterThanOrEqual(100);
    expect(await orderCount()).toBe(1);
  });

  it('with after_ms, cuts a server-sent event stream mid-stream', async () => {
    await addRule({ match: { operation_id: 'streamShippingFee' }, action: { type: 'reset', after_ms: 120 } });
    const path = '/v1/rates/shipping-fee/stream?origin=317101&destination=327301&weight=1.5';
    const error = await failure(send(base, path, { token: TOKEN_A }));
    expect(error.partial.status).toBe(200);
    expect(error.partial.body).not.toContain('event: done');
    const whole = await send(base, path, { token: TOKEN_A });
    expect(whole.body).toContain('event: done');
  });
});

describe('fault action "hang"', () => {
  it('never answers: the request ends with the client\'s own timeout', async () => {
    await addRule({ action: { type: 'hang' } });
    const error = await failure(create({ timeoutMs: 300 }));
    expect(error.code).toBe('CLIENT_TIMEOUT');
    expect(error.ms).toBeGreaterThanOrEqual(300);
    expect(await orderCount()).toBe(0);
    expect((await create()).status).toBe(201);
  });

  it('holds at most 100 requests of a client at once: past that 429 with Retry-After, and again once held ones are let go; no warning of the process', async () => {
    // The held requests share the module's stop signal: no "possible memory leak" warning of its 100 listeners.
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', warned);
    onTestFinished(() => void process.off('warning', warned));
    await addRule({ match: { operation_id: 'trackOrder' }, action: { type: 'hang' }, times: 1000 });
    const track = (timeoutMs: number, signal?: AbortSignal) => send(base, '/v1/order/tracking/SBXNOSUCH01', { token: TOKEN_A, timeoutMs, signal });
    // Held until the client gives them up below, however slow the machine is to hold all 100.
    const giveUp = new AbortController();
    setMaxListeners(100, giveUp.signal);
    const held = Array.from({ length: 100 }, () => failure(track(60_000, giveUp.signal)));
    // Wait until all 100 are held (the rule counts them).
    while (((await sandbox.call('GET', '/__sandbox/faults')).body.rules[0].hits as number) < 100) await new Promise((resolve) => setTimeout(resolve, 20));
    const refused = await track(10_000);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body)).toMatchObject({ success: false, message: expect.stringMatching(/already has 100 requests held open by fault rules \(hang, latency, dribble, or reset after a delay\)/) });
    // The refused requests did not spend the rule: its times are for the requests it held.
    for (const answer of await Promise.all(Array.from({ length: 20 }, () => track(10_000)))) expect(answer.status).toBe(429);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules[0]).toMatchObject({ hits: 100, remaining: 900, matched: 121 });
    // Another client's hang is its own.
    await addRule({ match: { operation_id: 'trackOrder' }, action: { type: 'hang' } }, TOKEN_B);
    expect((await failure(send(base, '/v1/order/tracking/SBXNOSUCH01', { token: TOKEN_B, timeoutMs: 300 }))).code).toBe('CLIENT_TIMEOUT');
    // Still held until their client gives them up; then there is room again (once the sandbox has seen them close).
    giveUp.abort();
    for (const error of await Promise.all(held)) expect(error.code).toBe('CLIENT_ABORTED');
    // Held, not a 429 slower than the 300 ms: the rule counts a request it holds, never one it refuses (a hit that an
    // earlier try's request made late counts as well: it too was held).
    const hits = async () => (await sandbox.call('GET', '/__sandbox/faults')).body.rules[0].hits as number;
    await vi.waitFor(
      async () => {
        expect((await failure(track(300))).code).toBe('CLIENT_TIMEOUT');
        expect(await hits()).toBeGreaterThan(100);
      },
      { timeout: 10_000, interval: 50 },
    );
    // The sandbox's own 429 (too many held) is no fault the client is graded on retrying.
    const report = (await sandbox.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string }> };
    expect(report.items.find((i) => i.id === 'fault.503-retried')).toMatchObject({ status: 'not_exercised' });
    expect(warnings, warnings.join('\n')).toEqual([]);
  });

  it('counts requests held by a latency rule among the 100: past them 429, and room again once their answers are sent', async () => {
    // A latency of 10 minutes held one partner's 2,800 requests, and 3,000 file descriptors, past the hang bound.
    // Long enough for the first held answer to wait still when the hundredth is held, however slow the machine.
    await addRule({ match: { operation_id: 'trackOrder' }, action: { type: 'latency', ms: 5_000 }, times: 1000 });
    const track = (timeoutMs: number) => send(base, '/v1/order/tracking/SBXNOSUCH01', { token: TOKEN_A, timeoutMs });
    const held = Array.from({ length: 100 }, () => track(30_000));
    while (((await sandbox.call('GET', '/__sandbox/faults')).body.rules[0].hits as number) < 100) await new Promise((resolve) => setTimeout(resolve, 20));
    const refused = await track(10_000);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).message).toMatch(/held open by fault rules/);
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(404);
    expect((await track(10_000)).status).toBe(404);
  });

  it.each([
    ['a dribble at 1 byte/s', { type: 'dribble', bytes_per_second: 1 }],
    ['a reset after 10 minutes', { type: 'reset', after_ms: 600_000 }],
  ])('counts requests held open by %s among the 100: past them 429, room again once their connections close', async (_name, action) => {
    // A magic AWB: its 200 answer is what is dribbled or cut. 2,000 of one partner's requests were held by a 1 byte/s dribble, 300 by a late reset, with no 429.
    await addRule({ match: { operation_id: 'trackOrder' }, action, times: 1000 });
    const track = (timeoutMs: number) => send(base, '/v1/order/tracking/SBXDLV00000001', { token: TOKEN_A, timeoutMs });
    const held = Array.from({ length: 100 }, () => failure(track(30_000)));
    while (((await sandbox.call('GET', '/__sandbox/faults')).body.rules[0].hits as number) < 100) await new Promise((resolve) => setTimeout(resolve, 20));
    const refused = await track(10_000);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).message).toMatch(/held open by fault rules/);
    // Another client is not held up by them.
    expect((await send(base, '/v1/order/tracking/SBXDLV00000001', { token: TOKEN_B, timeoutMs: 10_000 })).status).toBe(200);
    // Their connections close (a dribble sends a byte a second: no idle timeout of the client fires first).
    server.closeAllConnections();
    await Promise.all(held);
    // Room again (once the sandbox has seen them close): the next one is held open in its turn (its answer begun, 200), not refused.
    await vi.waitFor(async () => expect((await failure(track(300))).partial.status).toBe(200), { timeout: 10_000, interval: 50 });
  });

  it('does not keep a stopping sandbox from closing', async () => {
    const running = await createSandbox({ ...defaultTestOptions, port: 0 });
    await send(running.url, '/__sandbox/faults', { method: 'POST', token: TOKEN_A, body: { action: { type: 'hang' } } });
    const hung = failure(send(running.url, '/v1/order', { method: 'POST', token: TOKEN_A, body: createRequest(1) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await running.close();
    expect(performance.now() - started).toBeLessThan(2000);
    expect(['ECONNRESET', 'socket hang up']).toContain((await hung).code);
  });

  it.each([
    ['a JSON answer', '/v1/couriers', (body: string) => expect(JSON.parse(body)).toMatchObject({ success: true })],
    // Ended as a stream that is not dribbled is when the sandbox stops: cleanly, with the events sent so far.
    ["the shipping fee's event stream", '/v1/rates/shipping-fee/stream?origin=317101&destination=327301&weight=1.5', (body: string) => expect(body).toMatch(/^event: quote\n/)],
  ])('does not let a dribble of %s at a byte a second keep a stopping sandbox from closing: the rest goes at once', async (_, path, whole) => {
    const running = await createSandbox({ ...defaultTestOptions, port: 0 });
    await send(running.url, '/__sandbox/faults', { method: 'POST', token: TOKEN_A, body: { action: { type: 'dribble', bytes_per_second: 1 } } });
    const slow = send(running.url, path, { token: TOKEN_A, timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const started = performance.now();
    await running.close();
    // Its grace of 10 s is for answers on their way, not one that would take an hour.
    expect(performance.now() - started).toBeLessThan(5_000);
    const seen = await slow;
    expect(seen.status).toBe(200);
    whole(seen.body);
  });
  it('lets a hung request go and sends a dribbled answer whole as the stop begins, not once a webhook attempt in flight is answered', async () => {
    const receiver = await Receiver.start();
    onTestFinished(() => receiver.close());
    let answerWebhook = (): void => undefined;
    receiver.respond = () => ({ status: 200, body: 'ok', after: new Promise<void>((resolve) => (answerWebhook = resolve)) });
    const running = await createSandbox({ ...defaultTestOptions, port: 0, clients: [{ token: TOKEN_A, id: 'client-a', webhook: { url: receiver.url } }] });
    let closing: Promise<void> | undefined;
    onTestFinished(async () => {
      answerWebhook();
      await (closing ?? running.close());
    });
    const rule = async (match: string, action: unknown) => expect((await send(running.url, '/__sandbox/faults', { method: 'POST', token: TOKEN_A, body: { match: { operation_id: match }, action, times: 10 } })).status).toBe(201);
    await rule('trackOrder', { type: 'hang' });
    await rule('listCouriers', { type: 'dribble', bytes_per_second: 1 });
    expect((await send(running.url, '/v1/order', { method: 'POST', token: TOKEN_A, body: createRequest(1) })).status).toBe(201);
    // The AWB's webhook is sent, and its receiver does not answer until told: the stop waits for it.
    void running.clock.advance(60_000).catch(() => undefined);
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 10_000 });
    const hung = failure(send(running.url, '/v1/order/tracking/SBXDLV00000001', { token: TOKEN_A, timeoutMs: 60_000 }));
    const slow = send(running.url, '/v1/couriers', { token: TOKEN_A, timeoutMs: 60_000 });
    await vi.waitFor(async () => expect((JSON.parse((await send(running.url, '/__sandbox/faults', { token: TOKEN_A })).body) as { rules: Array<{ hits: number }> }).rules.map((r) => r.hits)).toEqual([1, 1]), { timeout: 10_000 });
    const started = performance.now();
    closing = running.close();
    let closed = false;
    void closing.then(() => (closed = true));
    const [dropped, seen] = await Promise.all([hung, slow]);
    // Both were let go while the stop still waits for the webhook's answer (no sooner than the test gives it).
    expect(closed).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(['ECONNRESET', 'socket hang up']).toContain(dropped.code);
    expect(seen.status).toBe(200);
    expect(JSON.parse(seen.body)).toMatchObject({ success: true });
    answerWebhook();
    await closing;
  }, 30_000);
});

describe('fault action "dribble"', () => {
  it('sends the whole answer, slower than the configured rate', async () => {
    await addRule({ action: { type: 'dribble', bytes_per_second: 400, interval_ms: 50 } });
    const seen = await create();
    expect(seen.status).toBe(201);
    expect(JSON.parse(seen.body)).toMatchObject({ success: true, order_numbers: [expect.any(String)] });
    const bytes = Buffer.byteLength(seen.body);
    expect(seen.chunks.length).toBeGreaterThan(3);
    expect(bytes / (seen.ms / 1000)).toBeLessThanOrEqual(400);
  });

  it("sends a stream (the fee's server-sent events) whole, slower than the configured rate, and only then ends it", async () => {
    const path = '/v1/rates/shipping-fee/stream?origin=317101&destination=327301&weight=1.5';
    const plain = await send(base, path, { token: TOKEN_A });
    await addRule({ match: { operation_id: 'streamShippingFee' }, action: { type: 'dribble', bytes_per_second: 2_000, interval_ms: 50 }, times: 5 });
    const seen = await send(base, path, { token: TOKEN_A, timeoutMs: 30_000 });
    expect(seen.status).toBe(200);
    expect(seen.headers['content-type']).toMatch(/^text\/event-stream/);
    // The same events, every byte of them (quotes drawn per courier and seed), the done event last.
    expect(seen.body).toBe(plain.body);
    expect(seen.body).toMatch(/event: done\ndata: \{"success":true,"count":5\}\n\n$/);
    expect(seen.chunks.length).toBeGreaterThan(20);
    expect(Buffer.byteLength(seen.body) / (seen.ms / 1000)).toBeLessThanOrEqual(2_000);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules[0]).toMatchObject({ hits: 1, remaining: 4 });
  });
});
