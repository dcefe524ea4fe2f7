import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import type { Receiver } from './receiver.js';
import { createOrders, deliveries, startWebhookSandbox, stopWebhookSandbox, type DeliveryView } from './support.js';

const AWB_DELAY = 60_000;
const HOUR = 3_600_000;

let receiver: Receiver;
let sandbox: TestSandbox;
/** Whether the receiver is down (answers 503). */
let down = false;
beforeEach(async () => {
  // One attempt per delivery: a failed one stays failed until it is recovered.
  ({ receiver, sandbox } = await startWebhookSandbox({ webhookRetries: '0' }));
  down = false;
  receiver.respond = () => (down ? { status: 503, body: 'down' } : { status: 200, body: 'ok' });
});
afterEach(() => stopWebhookSandbox(sandbox, receiver));

const now = async (): Promise<string> => (await sandbox.call('GET', '/__sandbox/clock')).body.now as string;
const recover = (body: unknown, token?: string) => sandbox.call('POST', '/__sandbox/webhooks/recover', { body, token });
const byOrder = (list: DeliveryView[]) => new Map(list.map((d) => [d.order_no, d]));

/**
 * An outage of the receiver inside a window and outside it: two orders failed before the
 * window, one delivered and two failed in it, one failed after it. Returns the window and
 * the order numbers of each group.
 */
async function outage() {
  down = true;
  const before = await createOrders(sandbox, 2);
  await sandbox.advance(AWB_DELAY + HOUR);
  const since = await now();
  down = false;
  const delivered = await createOrders(sandbox, 1);
  await sandbox.advance(AWB_DELAY);
  down = true;
  const failedIn = await createOrders(sandbox, 2);
  await sandbox.advance(AWB_DELAY + HOUR);
  const until = await now();
  const after = await createOrders(sandbox, 1);
  await sandbox.advance(AWB_DELAY + HOUR);
  down = false;
  const log = byOrder(await deliveries(sandbox));
  for (const order of [...before, ...failedIn, ...after]) expect(log.get(order)).toMatchObject({ status: 'failed', attempts: [expect.objectContaining({ status_code: 503 })] });
  expect(log.get(delivered[0]!)).toMatchObject({ status: 'delivered' });
  return { since, until, before, delivered, failedIn, after };
}

describe('POST /__sandbox/webhooks/recover', () => {
  it('redelivers exactly the failed deliveries of the window, in the background; failed ones outside it and delivered ones are untouched', async () => {
    const { since, until, before, delivered, failedIn, after } = await outage();
    const sentBefore = receiver.received.length;
    const res = await recover({ since, until });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ queued: 2, skipped: { endpoint_unavailable: 0, attempt_limit: 0 }, since, until });
    // Queued, not made in the request: on a manual clock nothing runs until the clock is advanced.
    expect(receiver.received).toHaveLength(sentBefore);
    await sandbox.advance(0);

    const log = byOrder(await deliveries(sandbox));
    const recovered = failedIn.map((order) => log.get(order)!);
    expect(receiver.received.slice(sentBefore).map((w) => w.id).sort()).toEqual(recovered.map((d) => d.id).sort());
    for (const d of recovered) {
      expect(d.status).toBe('delivered');
      expect(d.attempts.map((a) => [a.trigger, a.status_code])).toEqual([
        ['schedule', 503],
        ['redeliver', 200],
      ]);
    }
    for (const order of [...before, ...after]) expect(log.get(order)).toMatchObject({ status: 'failed', attempts: [expect.objectContaining({ status_code: 503 })] });
    expect(log.get(delivered[0]!)!.attempts).toHaveLength(1);
  });

  it('takes every failed delivery since `since` without `until`, and a failure leaves the delivery failed with the attempt logged', async () => {
    const { since, failedIn, after } = await outage();
    down = true;
    expect((await recover({ since })).body.queued).toBe(3);
    await sandbox.advance(0);
    const log = byOrder(await deliveries(sandbox));
    for (const order of [...failedIn, ...after]) {
      expect(log.get(order)).toMatchObject({ status: 'failed' });
      expect(log.get(order)!.attempts.map((a) => a.trigger)).toEqual(['schedule', 'redeliver']);
    }
  });

  it('sends each recovered delivery to the endpoint it went to, and leaves out those of a disabled endpoint', async () => {
    const other = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: `${receiver.url}/other` } });
    expect(other.status).toBe(201);
    const third = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: `${receiver.url}/third` } });
    down = true;
    const since = await now();
    await createOrders(sandbox, 1);
    await sandbox.advance(AWB_DELAY);
    down = false;
    expect((await deliveries(sandbox)).map((d) => d.status)).toEqual(['failed', 'failed', 'failed']);
    expect((await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${third.body.id}`, { body: { enabled: false } })).status).toBe(200);
    // The disabled endpoint's delivery is left out, and the answer says so.
    expect((await recover({ since })).body).toMatchObject({ queued: 2, skipped: { endpoint_unavailable: 1, attempt_limit: 0 } });
    await sandbox.advance(0);
    const log = await deliveries(sandbox);
    const of = (endpoint: string) => log.find((d) => d.endpoint_id === endpoint)!;
    expect(of('default')).toMatchObject({ status: 'delivered' });
    expect(of(other.body.id)).toMatchObject({ status: 'delivered' });
    expect(of(other.body.id).attempts.map((a) => [a.trigger, a.url])).toEqual([
      ['schedule', `${receiver.url}/other`],
      ['redeliver', `${receiver.url}/other`],
    ]);
    expect(of(third.body.id)).toMatchObject({ status: 'failed', attempts: [expect.objectContaining({ trigger: 'schedule' })] });
  });

  it('leaves out a failed delivery that already has 50 attempts, and counts it as skipped', async () => {
    down = true;
    const since = await now();
    await createOrders(sandbox, 2);
    await sandbox.advance(AWB_DELAY);
    const [spent, other] = await deliveries(sandbox);
    for (let i = 1; i < 50; i += 1) expect((await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${spent!.id}/redeliver`)).status).toBe(200);
    down = false;
    expect((await recover({ since })).body).toMatchObject({ queued: 1, skipped: { endpoint_unavailable: 0, attempt_limit: 1 } });
    await sandbox.advance(0);
    expect((await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${spent!.id}`)).body).toMatchObject({ status: 'failed', attempts: expect.any(Array) });
    expect((await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${spent!.id}`)).body.attempts).toHaveLength(50);
    expect((await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${other!.id}`)).body).toMatchObject({ status: 'delivered' });
  });

  it.each([
    ['until before since', { since: '2026-05-01T12:00:00Z', until: '2026-05-01T11:59:59Z' }, 'until'],
    ['a since that is not a time', { since: 'yesterday' }, 'since'],
    ['an until that is not a time', { since: '2026-05-01T12:00:00Z', until: 'later' }, 'until'],
    ['no since', { until: '2026-05-01T12:00:00Z' }, 'since'],
    ['an unknown field', { since: '2026-05-01T12:00:00Z', upto: '2026-05-01T13:00:00Z' }, 'upto'],
  ])('answers 400 naming the field for %s, and queues nothing', async (_, body, field) => {
    await outage();
    const sent = receiver.received.length;
    const res = await recover(body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContainEqual(expect.stringContaining(field));
    await sandbox.advance(0);
    expect(receiver.received).toHaveLength(sent);
  });

  it('answers 409 to a client with no webhook URL', async () => {
    const res = await recover({ since: '2000-01-01T00:00:00Z' }, TOKEN_B);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/No webhook URL/);
  });

  it('recovers only the caller’s own failed deliveries', async () => {
    expect((await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url }, token: TOKEN_B })).status).toBe(200);
    down = true;
    await createOrders(sandbox, 2, {}, TOKEN_B);
    await sandbox.advance(AWB_DELAY);
    down = false;
    expect((await deliveries(sandbox, '', TOKEN_B)).map((d) => d.status)).toEqual(['failed', 'failed']);
    // Client A, with no deliveries of its own, recovers none of B's.
    expect((await recover({ since: '2000-01-01T00:00:00Z' })).body.queued).toBe(0);
    await sandbox.advance(0);
    expect((await deliveries(sandbox, '', TOKEN_B)).map((d) => d.status)).toEqual(['failed', 'failed']);
    expect((await recover({ since: '2000-01-01T00:00:00Z' }, TOKEN_B)).body.queued).toBe(2);
    await sandbox.advance(0);
    expect((await deliveries(sandbox, '', TOKEN_B)).map((d) => d.status)).toEqual(['delivered', 'delivered']);
  });
});
