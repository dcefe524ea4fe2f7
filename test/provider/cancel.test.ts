import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxEvent } from '../../src/records/event.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { cancel, createOne, DAY, detailOf, HOUR, MINUTE } from './orders.js';

let sandbox: TestSandbox;
let events: SandboxEvent[];
beforeEach(async () => {
  sandbox = await testSandbox({
    clients: [
      { token: 'token-client-a', id: 'client-a' },
      { token: TOKEN_B, id: 'client-b' },
      { token: 'reader', id: 'client-a', read_only: true },
    ],
  });
  events = [];
  sandbox.services.events.subscribe(async (e) => void events.push(e));
});
afterEach(() => sandbox.close());

const track = (awb: string) => sandbox.call('GET', `/v1/order/tracking/${awb}`);

describe('POST /v1/order/cancel', () => {
  it('cancels an order before its AWB: no AWB and no scan ever follow', async () => {
    const orderNo = await createOne(sandbox);
    const res = await cancel(sandbox, { order_no: orderNo, reason: 'Customer changed their mind' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      message: `Order ${orderNo} has been cancelled.`,
      data: { order_no: orderNo, status: 'cancelled', awb: null, cancelled_at: Math.floor(sandbox.services.clock.now() / 1000) },
    });
    await sandbox.advance(7 * DAY);
    const detail = await detailOf(sandbox, orderNo);
    expect(detail.body.data).toMatchObject({ status: 'cancelled', awb: null, awb_generated_at: null, last_status: null });
    expect(await sandbox.services.storage.jobs.get('awb', orderNo)).toBeUndefined();
    expect(await sandbox.services.storage.jobs.get('step', orderNo)).toBeUndefined();
    expect(events.map((e) => [e.type, e.order.order_no, e.order.awb])).toEqual([['order.cancelled', orderNo, null]]);
  });

  it('cancels an order with an AWB before pick-up: tracking shows status "5" and the journey stops', async () => {
    const orderNo = await createOne(sandbox);
    await sandbox.advance(MINUTE);
    const { awb } = (await detailOf(sandbox, orderNo)).body.data;
    expect((await track(awb)).status).toBe(404); // no scan yet
    await sandbox.advance(30 * MINUTE);
    const res = await cancel(sandbox, { order_no: orderNo, reason: 'Out of stock' });
    expect(res.status).toBe(200);
    await sandbox.advance(7 * DAY);
    const tracking = await track(awb);
    expect(tracking.status).toBe(200);
    expect(tracking.body.last_status).toBe('5');
    expect(tracking.body.history).toHaveLength(1);
    expect(tracking.body.history[0]).toMatchObject({
      note: 'Order cancelled',
      description: 'Shipment cancelled by the shipper before pick-up: Out of stock',
      status: '5',
      pod_photo: null,
      update_on: tracking.body.last_update,
    });
    expect((await detailOf(sandbox, orderNo)).body.data).toMatchObject({ status: 'cancelled', last_status: '5', awb });
    expect(events.map((e) => e.type)).toEqual(['awb.generated', 'order.cancelled']);
  });

  it.each([
    ['spaces only', '   ', 'Shipment cancelled by the shipper before pick-up'],
    ['spaces around', '  Out of stock \t', 'Shipment cancelled by the shipper before pick-up: Out of stock'],
  ])('tells a reason of %s in the tracking entry without them', async (_, reason, description) => {
    const orderNo = await createOne(sandbox);
    await sandbox.advance(MINUTE);
    const { awb } = (await detailOf(sandbox, orderNo)).body.data;
    expect((await cancel(sandbox, { order_no: orderNo, reason })).status).toBe(200);
    expect((await track(awb)).body.history[0]).toMatchObject({ note: 'Order cancelled', description });
  });

  it('refuses after the pick-up scan with 400 naming order_no, and changes nothing', async () => {
    const orderNo = await createOne(sandbox);
    await sandbox.advance(MINUTE + 2 * HOUR);
    const res = await cancel(sandbox, { order_no: orderNo });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      message: `Order ${orderNo} can no longer be cancelled: its status is picked_up. Orders can be cancelled only before the pick-up scan (status created or awb_generated).`,
      errors: [{ field: 'order_no', message: 'is picked_up; only created or awb_generated orders can be cancelled' }],
    });
    await sandbox.advance(3 * DAY);
    expect((await detailOf(sandbox, orderNo)).body.data).toMatchObject({ status: 'delivered', cancelled_at: null });
    expect(events.map((e) => e.type)).not.toContain('order.cancelled');
  });

  it('refuses to cancel twice', async () => {
    const orderNo = await createOne(sandbox);
    await cancel(sandbox, { order_no: orderNo });
    const res = await cancel(sandbox, { order_no: orderNo });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(`Order ${orderNo} is already cancelled.`);
    expect(events).toHaveLength(1);
  });

  it('returns 404 for another client\'s order and leaves it alone', async () => {
    const orderNo = await createOne(sandbox);
    const res = await cancel(sandbox, { order_no: orderNo }, TOKEN_B);
    expect(res.status).toBe(404);
    expect((await detailOf(sandbox, orderNo)).body.data.status).toBe('created');
  });

  it('returns 404 for an unknown order number', async () => {
    expect((await cancel(sandbox, { order_no: '500000000000' })).status).toBe(404);
  });

  it('returns 403 for a read-only token', async () => {
    const orderNo = await createOne(sandbox);
    const res = await cancel(sandbox, { order_no: orderNo }, 'reader');
    expect(res.status).toBe(403);
    expect((await detailOf(sandbox, orderNo)).body.data.status).toBe('created');
  });

  it.each([
    [{}, 'order_no', 'is required'],
    [{ order_no: 508734411209 }, 'order_no', 'JSON string'],
    [{ order_no: 'JN0000000001' }, 'order_no', 'digits only'],
    [{ order_no: '508734411209', reason: 'x'.repeat(201) }, 'reason', 'at most 200'],
  ])('returns 400 for %j naming %s', async (body, field, message) => {
    const res = await cancel(sandbox, body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
  });

  it('returns 400 naming body when there is none', async () => {
    const res = await sandbox.call('POST', '/v1/order/cancel');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'is required' }]);
  });
});

describe('a cancellation across a restart', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-cancel-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is kept in the data file, and the journey stays stopped', async () => {
    const data = join(dir, 'sandbox.json');
    let first = await testSandbox({ data });
    const orderNo = await createOne(first);
    await cancel(first, { order_no: orderNo });
    await first.close();
    first = await testSandbox({ data });
    try {
      await first.advance(DAY);
      expect((await detailOf(first, orderNo)).body.data).toMatchObject({ status: 'cancelled', awb: null });
    } finally {
      await first.close();
    }
  });
});
