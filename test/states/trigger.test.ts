import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { createOrders, startWebhookSandbox, stopWebhookSandbox } from '../webhooks/support.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const verified = (receiver: Receiver) => receiver.received.map((r) => new Webhook(SECRET).verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>);

let receiver: Receiver;
let sandbox: TestSandbox;
beforeEach(async () => ({ receiver, sandbox } = await startWebhookSandbox({ webhookSecret: SECRET })));
afterEach(() => stopWebhookSandbox(sandbox, receiver));

const trigger = (body: unknown) => sandbox.call('POST', '/__sandbox/events/trigger', { body });
const clockMs = async () => (await sandbox.call('GET', '/__sandbox/clock')).body.now_ms as number;

describe('POST /__sandbox/events/trigger', () => {
  it('awb.generated on a new order delivers a signed webhook with the order\'s AWB, and answers its delivery and outcome', async () => {
    const res = await trigger({ event: 'awb.generated' });
    expect(res.status).toBe(200);
    const { order } = res.body;
    expect(order).toMatchObject({ status: 'awb_generated', awb: expect.stringMatching(/^\w+$/) });
    expect(verified(receiver)).toEqual([{ event: 'awb.generated', batch_id: order.batch_id, order_no: order.order_no, order_code: order.order_code, courier_code: order.courier_code, awb: order.awb, generated_at: Math.floor(Date.parse(order.awb_generated_at) / 1000) }]);
    expect(res.body.deliveries.map((d: { id: string }) => d.id)).toEqual([receiver.received[0]!.id]);
    expect(res.body.outcome).toBe('delivered');
  });

  it('answers the least successful delivery of the event as its outcome when the client has several endpoints', async () => {
    // The default endpoint's receiver declines; a second endpoint's accepts (its delivery is listed first, the newer).
    receiver.respond = () => ({ status: 500, body: 'down' });
    const healthy = await Receiver.start();
    try {
      const endpoint = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: healthy.url } });
      expect(endpoint.status).toBe(201);
      const res = await trigger({ event: 'awb.generated' });
      expect(res.status).toBe(200);
      expect(res.body.deliveries.map((d: { endpoint_id: string; status: string }) => [d.endpoint_id, d.status])).toEqual([
        [endpoint.body.id, 'delivered'],
        ['default', 'pending'],
      ]);
      expect(res.body.outcome).toBe('pending');
    } finally {
      await healthy.close();
    }
  });

  it('awb.failed on a new order delivers awb.failed with the reason', async () => {
    const res = await trigger({ event: 'awb.failed' });
    expect(res.status).toBe(200);
    expect(res.body.order).toMatchObject({ status: 'awb_failed', awb: null, scenario: 'awb_failed' });
    expect(verified(receiver)).toEqual([expect.objectContaining({ event: 'awb.failed', order_no: res.body.order.order_no, reason: res.body.order.awb_error })]);
    expect(res.body.outcome).toBe('delivered');
  });

  it('order.cancelled on a new order delivers its AWB webhook, then order.cancelled with that AWB', async () => {
    const res = await trigger({ event: 'order.cancelled' });
    expect(res.status).toBe(200);
    const { order } = res.body;
    expect(order.status).toBe('cancelled');
    expect(verified(receiver).map((w) => [w.event, w.awb])).toEqual([
      ['awb.generated', order.awb],
      ['order.cancelled', order.awb],
    ]);
    expect(res.body.deliveries).toHaveLength(2);
    expect(res.body.outcome).toBe('delivered');
  });

  it('tracking.step lays the journey out in the past: the AWB webhook, the history up to the step, the next step still ahead', async () => {
    const before = await clockMs();
    const res = await trigger({ event: 'tracking.step', scenario: 'returned', to_step: 'attempt_failed_1' });
    expect(res.status).toBe(200);
    const { order } = res.body;
    expect(order).toMatchObject({ scenario: 'returned', status: 'delivery_failed', next: { step: 'out_for_delivery_retry' } });
    expect(order.history.map((h: { note: string }) => h.note)).toHaveLength(7);
    expect(order.history[0]).toMatchObject({ status: '3' });
    for (const entry of order.history) expect(entry.update_on * 1000).toBeLessThanOrEqual(before + 1000);
    expect(Date.parse(order.awb_generated_at)).toBeLessThan(before);
    expect(await clockMs()).toBe(before);
    expect(verified(receiver)).toEqual([expect.objectContaining({ event: 'awb.generated', awb: order.awb })]);
    const tracking = await sandbox.call('GET', `/v1/order/tracking/${order.awb}`);
    expect(tracking.body.history).toHaveLength(7);
  });

  it('takes an existing order to a step given by its number, from where it stands', async () => {
    const [orderNo] = await createOrders(sandbox, 1);
    const res = await trigger({ event: 'tracking.step', order_no: orderNo, to_step: 2 });
    expect(res.status).toBe(200);
    expect(res.body.order).toMatchObject({ order_no: orderNo, status: 'in_transit' });
    expect(res.body.order.history).toHaveLength(2);
    expect(verified(receiver)).toEqual([expect.objectContaining({ event: 'awb.generated', order_no: orderNo })]);
  });

  it('answers 409 and changes nothing when an existing order cannot get there from where it stands', async () => {
    const delivered = (await trigger({ event: 'tracking.step', to_step: 'pod' })).body.order;
    for (const body of [{ event: 'order.cancelled' }, { event: 'awb.generated' }, { event: 'tracking.step', to_step: 'pickup' }]) {
      const res = await trigger({ ...body, order_no: delivered.order_no });
      expect(res.status, JSON.stringify(body)).toBe(409);
    }
    const after = (await sandbox.call('GET', `/__sandbox/orders/${delivered.order_no}`)).body;
    const scans = (history: { note: string; update_on: number }[]) => history.map((h) => [h.note, h.update_on]);
    expect(after.status).toBe('delivered');
    expect(scans(after.history)).toEqual(scans(delivered.history));
    expect(receiver.received).toHaveLength(1);
  });

  it('answers 409 saying a cancelled order has no steps to play, not that it is past the step', async () => {
    const cancelled = (await trigger({ event: 'order.cancelled' })).body.order;
    const res = await trigger({ event: 'tracking.step', order_no: cancelled.order_no, to_step: 3 });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe(`Order ${cancelled.order_no} is cancelled: it has no tracking steps to play (trigger it on a new order instead).`);
  });

  it.each([
    [{ event: 'awb.exploded' }, 'event'],
    [{}, 'event'],
    [{ event: 'tracking.step', scenario: 'returned', to_step: 'nowhere' }, 'to_step'],
    [{ event: 'tracking.step', scenario: 'no-such-scenario', to_step: 1 }, 'scenario'],
    [{ event: 'awb.generated', to_step: 'pickup' }, 'to_step'],
    [{ event: 'awb.generated', scenario: 'awb_failed' }, 'scenario'],
  ])('answers 400 naming the field for %j, and creates nothing', async (body, field) => {
    const res = await trigger(body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(0);
    expect(receiver.received).toHaveLength(0);
  });

  it('answers 400 naming a field it does not know (a misspelt order_no), and makes no order', async () => {
    const [orderNo] = await createOrders(sandbox, 1);
    const res = await trigger({ event: 'order.cancelled', orderNo });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'orderNo', message: 'is not a known field' }]);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(1);
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.status).toBe('created');
  });

  it('says to_step is required when tracking.step comes without it, listing the steps', async () => {
    const res = await trigger({ event: 'tracking.step', scenario: 'returned' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'to_step', message: expect.stringMatching(/^is required for tracking\.step: a step of scenario returned \(its key, or its number from 1\): \w+/) }]);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(0);
  });

  it.each([[true], [1.5], [null]])('says to_step must be text or a whole number for %j, in words, not the validator\'s type list', async (toStep) => {
    const res = await trigger({ event: 'tracking.step', scenario: 'returned', to_step: toStep });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'to_step', message: 'must be text or a whole number' }]);
  });

  it("answers 400 naming scenario when it names another scenario than an existing order's, and leaves the order as it was", async () => {
    const [orderNo] = await createOrders(sandbox, 1);
    const own = (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.scenario;
    for (const event of ['awb.generated', 'order.cancelled', 'tracking.step']) {
      const res = await trigger({ event, order_no: orderNo, scenario: own === 'returned' ? 'delivered' : 'returned', ...(event === 'tracking.step' ? { to_step: 1 } : {}) });
      expect(res.status, event).toBe(400);
      expect(res.body.errors, event).toEqual([{ field: 'scenario', message: `must be the order's own scenario, ${own} (or left out)` }]);
    }
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body).toMatchObject({ status: 'created', awb: null });
    expect(receiver.received).toHaveLength(0);
  });

  it('answers 404 for an order the caller does not have', async () => {
    const [theirs] = await createOrders(sandbox, 1, {}, 'token-client-b');
    expect((await trigger({ event: 'awb.generated', order_no: theirs })).status).toBe(404);
  });

  it("names the client's default scenario when a new order's scenario, not sent, cannot give the event or the step", async () => {
    await stopWebhookSandbox(sandbox, receiver);
    ({ receiver, sandbox } = await startWebhookSandbox({ webhookSecret: SECRET, scenario: 'awb_failed' }));
    const generated = await trigger({ event: 'awb.generated' });
    expect(generated.status).toBe(400);
    expect(generated.body.errors).toEqual([{ field: 'scenario', message: expect.stringMatching(/^awb_failed \(the client's default scenario; send scenario to choose another\) fails the AWB/) }]);
    const step = await trigger({ event: 'tracking.step', to_step: 1 });
    expect(step.body.errors).toEqual([{ field: 'to_step', message: expect.stringContaining("scenario awb_failed (the client's default scenario; send scenario to choose another)") }]);
    // A scenario the caller sent is named as sent.
    expect((await trigger({ event: 'awb.generated', scenario: 'awb_failed' })).body.errors[0].message).toMatch(/^awb_failed fails the AWB/);
    expect((await trigger({ event: 'awb.generated', scenario: 'delivered' })).status).toBe(200);
  });
});
