import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import { downPort, Receiver } from './receiver.js';
import { createOrders, deliveries, startWebhookSandbox, stopWebhookSandbox, webhookSandbox } from './support.js';

const AWB_DELAY = 60_000;
const SCHEDULE = [0, 5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000];

let receiver: Receiver;
let sandbox: TestSandbox;
beforeEach(async () => ({ receiver, sandbox } = await startWebhookSandbox()));
afterEach(() => stopWebhookSandbox(sandbox, receiver));

describe('webhook retries on the sandbox clock', () => {
  it('retries a receiver that answers 500 three times on the default schedule, then delivers; the log shows every attempt', async () => {
    receiver.respond = (_, i) => (i < 3 ? { status: 500, body: 'boom' } : { status: 200, body: 'thanks' });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    expect(receiver.received).toHaveLength(1);
    await sandbox.advance(4_999);
    expect(receiver.received).toHaveLength(1);
    await sandbox.advance(1);
    expect(receiver.received).toHaveLength(2);
    await sandbox.advance(30_000);
    expect(receiver.received).toHaveLength(3);
    await sandbox.advance(119_999);
    expect(receiver.received).toHaveLength(3);
    await sandbox.advance(1);
    expect(receiver.received).toHaveLength(4);

    const [delivery] = await deliveries(sandbox);
    expect(delivery).toMatchObject({ status: 'delivered', next_attempt_at: null, last_error: null });
    expect(delivery!.attempts.map((a) => [a.n, a.status_code, a.response_body, a.trigger])).toEqual([
      [1, 500, 'boom', 'schedule'],
      [2, 500, 'boom', 'schedule'],
      [3, 500, 'boom', 'schedule'],
      [4, 200, 'thanks', 'schedule'],
    ]);
    const times = delivery!.attempts.map((a) => Date.parse(a.at!));
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual([5_000, 30_000, 120_000]);
    for (const attempt of delivery!.attempts) expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("logs why fetch would not send an attempt (a port it refuses), not fetch's bare 'fetch failed'", async () => {
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: 'http://127.0.0.1:9/hooks' } });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    const [delivery] = await deliveries(sandbox);
    expect(delivery).toMatchObject({ status: 'pending', last_error: 'fetch failed: bad port' });
  });

  it('retries a receiver that is down, logging the connection error, and delivers once it is up', async () => {
    const port = await downPort();
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: `http://127.0.0.1:${port}/hooks` } });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY + 5_000);
    let [delivery] = await deliveries(sandbox);
    expect(delivery).toMatchObject({ status: 'pending', last_error: expect.stringContaining('ECONNREFUSED') });
    expect(delivery!.attempts.map((a) => [a.status_code, a.error?.split(':')[0]])).toEqual([
      [null, 'ECONNREFUSED'],
      [null, 'ECONNREFUSED'],
    ]);
    const up = await Receiver.start(port);
    try {
      await sandbox.advance(30_000);
      expect(up.received).toHaveLength(1);
      [delivery] = await deliveries(sandbox);
      expect(delivery!.status).toBe('delivered');
      expect(delivery!.attempts.map((a) => a.status_code)).toEqual([null, null, 200]);
    } finally {
      await up.close();
    }
  });

  it('gives up after the last attempt of the schedule: failed, with every attempt logged, and still replayable', async () => {
    receiver.respond = () => ({ status: 503 });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY + SCHEDULE.reduce((a, b) => a + b) + 86_400_000);
    expect(receiver.received).toHaveLength(7);
    const [delivery] = await deliveries(sandbox);
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null, last_error: 'HTTP 503' });
    expect(delivery!.attempts).toHaveLength(7);
    receiver.respond = () => ({ status: 200 });
    const res = await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${delivery!.id}/redeliver`);
    expect(res.body.status).toBe('delivered');
    expect(receiver.received).toHaveLength(8);
  });

  it('grades a delivery whose last retry failed as missed in the readiness report, where each failed attempt alone waits for the next', async () => {
    receiver.respond = () => ({ status: 500 });
    await createOrders(sandbox, 1);
    const item = async (id: string) => ((await sandbox.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string; exercised: number; detail: string }> }).items.find((i) => i.id === id)!;
    await sandbox.advance(AWB_DELAY + SCHEDULE.slice(0, 6).reduce((a, b) => a + b));
    expect(receiver.received).toHaveLength(6);
    // Each item counts deliveries, not attempts: one delivery, exercised once, however many attempts it took.
    expect(await item('webhook.awb-acknowledged')).toMatchObject({ status: 'not_handled', exercised: 1, detail: expect.stringMatching(/^Exercised 1 time; the handling is not seen yet/) });
    await sandbox.advance(SCHEDULE[6]!);
    expect(receiver.received).toHaveLength(7);
    // The first attempt and six retries were made; the delivery is missed once, under each item.
    for (const id of ['webhook.awb-acknowledged', 'webhook.retry-acknowledged']) {
      expect(await item(id), id).toMatchObject({ status: 'not_handled', exercised: 1, missed: 1, detail: expect.stringMatching(/^Missed 1 of 1 time\./) });
    }
    // Redelivered and acknowledged later in the run, as the recovery guide has it: the client got its AWB after all.
    receiver.respond = () => ({ status: 200 });
    const [failed] = await deliveries(sandbox);
    expect((await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${failed!.id}/redeliver`)).body.status).toBe('delivered');
    expect(await item('webhook.awb-acknowledged')).toMatchObject({ status: 'handled', missed: 0, detail: 'Handled (1 of 1).' });
    // Its retries were acknowledged after all, by the redelivery: handled, as the catalogue says.
    expect(await item('webhook.retry-acknowledged')).toMatchObject({ status: 'handled', exercised: 1, missed: 0, detail: 'Handled (1 of 1).' });
  });

  it('grades a delivery its receiver answered 410 Gone as missed', async () => {
    receiver.respond = (_, i) => (i === 0 ? { status: 500 } : { status: 410 });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY + SCHEDULE[1]!);
    expect(receiver.received).toHaveLength(2);
    const report = (await sandbox.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string; missed: number }> };
    for (const id of ['webhook.awb-acknowledged', 'webhook.retry-acknowledged']) expect(report.items.find((i) => i.id === id), id).toMatchObject({ status: 'not_handled', missed: 1 });
  });

  it('grades a delivery whose redelivery was answered 410 Gone as missed, once', async () => {
    receiver.respond = (_, i) => (i === 0 ? { status: 500 } : { status: 410 });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    const [pending] = await deliveries(sandbox);
    for (let i = 0; i < 2; i++) await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${pending!.id}/redeliver`);
    const report = (await sandbox.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string; missed: number }> };
    expect(report.items.find((i) => i.id === 'webhook.awb-acknowledged')).toMatchObject({ status: 'not_handled', missed: 1 });
  });

  it('follows a configured schedule (webhookRetries)', async () => {
    await sandbox.close();
    sandbox = await webhookSandbox(receiver.url, { webhookRetries: '0,1s' });
    receiver.respond = () => ({ status: 500 });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY + 3_600_000);
    expect(receiver.received).toHaveLength(2);
    expect((await sandbox.call('GET', '/__sandbox/webhook')).body.retry_schedule_ms).toEqual([0, 1_000]);
  });

  it.each([
    ['seconds', () => '120', 120_000],
    // An HTTP date is in whole seconds, read a moment after it was written (a stall of a busy machine between).
    ['an HTTP date', () => new Date(Date.now() + 120_000).toUTCString(), 110_000],
  ])('waits as long as Retry-After says in %s', async (_, retryAfter, least) => {
    receiver.respond = (_, i) => (i === 0 ? { status: 429, headers: { 'Retry-After': retryAfter() } } : { status: 200 });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    const [pending] = await deliveries(sandbox);
    const wait = Date.parse(pending!.next_attempt_at!) - Date.parse(pending!.attempts[0]!.at!);
    expect(wait).toBeGreaterThanOrEqual(least);
    expect(wait).toBeLessThanOrEqual(120_000);
    await sandbox.advance(30_000);
    expect(receiver.received).toHaveLength(1);
    await sandbox.advance(90_000);
    expect(receiver.received).toHaveLength(2);
  });

  it('caps Retry-After at 6 hours', async () => {
    receiver.respond = () => ({ status: 503, headers: { 'Retry-After': '999999' } });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    const [pending] = await deliveries(sandbox);
    expect(Date.parse(pending!.next_attempt_at!) - Date.parse(pending!.attempts[0]!.at!)).toBe(6 * 3_600_000);
  });

  it('counts a receiver slower than the timeout as a failed attempt', async () => {
    await sandbox.close();
    sandbox = await webhookSandbox(receiver.url, { webhookTimeout: '150ms' });
    receiver.respond = (_, i) => (i === 0 ? { status: 200, hang: true } : { status: 200 });
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    let [delivery] = await deliveries(sandbox);
    expect(delivery!.attempts[0]).toMatchObject({ status_code: null, error: 'timed out after 150 ms' });
    await sandbox.advance(5_000);
    [delivery] = await deliveries(sandbox);
    expect(delivery!.status).toBe('delivered');
  });

  it('counts a 2xx answered within the timeout as delivered, its body still coming when the timeout ends', async () => {
    const slow = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('ok');
      const dribble = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(dribble));
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', () => resolve()));
    try {
      await sandbox.close();
      sandbox = await webhookSandbox(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/hooks`, { webhookTimeout: '300ms' });
      await createOrders(sandbox, 1);
      await sandbox.advance(AWB_DELAY);
      const [delivery] = await deliveries(sandbox);
      expect(delivery).toMatchObject({ status: 'delivered', next_attempt_at: null });
      expect(delivery!.attempts).toEqual([expect.objectContaining({ status_code: 200, error: null, response_body: expect.stringMatching(/^ok\.*$/) })]);
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it('disables the endpoint on 410 Gone, pauses later deliveries, and resumes them on PUT /__sandbox/webhook', async () => {
    receiver.respond = () => ({ status: 410 });
    const warn = vi.spyOn(sandbox.services.logger, 'warn');
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ client: 'client-a', endpoint: 'default' }), expect.stringMatching(/^webhook endpoint disabled: its receiver answered 410 Gone/));
    const endpoint = await sandbox.call('GET', '/__sandbox/webhook');
    expect(endpoint.body).toMatchObject({ state: 'disabled', enabled: false, disabled_reason: expect.stringContaining('410') });
    let [gone] = await deliveries(sandbox);
    expect(gone).toMatchObject({ status: 'failed', last_error: expect.stringContaining('410') });

    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    expect(receiver.received).toHaveLength(1);
    const paused = (await deliveries(sandbox))[1]!;
    expect(paused).toMatchObject({ status: 'paused', attempts: [], last_error: expect.stringMatching(/^the endpoint is disabled \(the receiver answered 410 Gone at [^)]+\); PUT \/__sandbox\/webhook enables it again$/) });
    const redeliver = await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${paused.id}/redeliver`);
    expect(redeliver.status).toBe(409);
    // The way out is said once, not once by the reason and again by the message.
    expect(redeliver.body.message).toMatch(/^The webhook endpoint of this client is disabled \(the receiver answered 410 Gone at [^)]+\); PUT \/__sandbox\/webhook enables it again\.$/);

    receiver.respond = () => ({ status: 200 });
    const put = await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } });
    expect(put.body).toMatchObject({ state: 'enabled', enabled: true, disabled_reason: null });
    await sandbox.advance(0);
    expect(receiver.received.map((r) => r.id)).toEqual([gone!.id, paused.id]);
    [gone] = await deliveries(sandbox);
    expect(gone!.status).toBe('failed');
    expect((await deliveries(sandbox))[1]!.status).toBe('delivered');
  });
});
