import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { createOne, detailOf, HOUR, MINUTE } from './orders.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

describe('GET /v1/order/{order_no}', () => {
  it('shows the stored order: sender and item as sent, courier, no AWB yet, status, scenario, times in epoch seconds', async () => {
    const createdAt = Math.floor(sandbox.services.clock.now() / 1000);
    const request = createRequest(1);
    const orderNo = await createOne(sandbox);
    const res = await detailOf(sandbox, orderNo);
    expect(res.status).toBe(200);
    const { items, courier_code, ...sender } = request;
    expect(res.body).toEqual({
      success: true,
      data: expect.objectContaining({
        order_no: orderNo,
        order_code: items[0]!.order_code,
        courier_code,
        service_code: '1',
        service_name: 'REG',
        awb: null,
        awb_error: null,
        status: 'created',
        last_status: null,
        scenario: 'delivered',
        sender,
        item: items[0],
        created_at: createdAt,
        updated_at: createdAt,
        awb_generated_at: null,
        cancelled_at: null,
      }),
    });
  });

  it('shows the areas and the price of the order', async () => {
    const res = await detailOf(sandbox, await createOne(sandbox));
    expect(res.body.data.sender_area).toMatchObject({ district_id: '317101', district_name: 'Tebet', city_name: 'Kota Jakarta Selatan' });
    expect(res.body.data.receiver_area).toMatchObject({ district_id: '327301', district_name: 'Sukasari', city_name: 'Kota Bandung' });
    // 1.5 kg, 30×20×10 cm → 2 kg at 12,000 (zone A to A), JNE REG ×1, no insurance, no COD
    expect(res.body.data.rate).toEqual({ chargeable_kg: 2, shipping_fee: 24_000, insurance_fee: 0, cod_fee: 0, total_fee: 24_000 });
  });

  it('shows the AWB and status as the journey goes on', async () => {
    const orderNo = await createOne(sandbox);
    await sandbox.advance(MINUTE);
    const generated = await detailOf(sandbox, orderNo);
    expect(generated.body.data).toMatchObject({ awb: expect.stringMatching(/^JN\d{10}$/), status: 'awb_generated', awb_generated_at: expect.any(Number) });
    await sandbox.advance(3 * HOUR);
    const picked = await detailOf(sandbox, orderNo);
    expect(picked.body.data).toMatchObject({ status: 'picked_up', last_status: '1' });
  });

  it('returns 404 for another client\'s order, as if it did not exist', async () => {
    const orderNo = await createOne(sandbox);
    const res = await sandbox.call('GET', `/v1/order/${orderNo}`, { token: TOKEN_B });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, message: 'Record Not Found', errors: [] });
  });

  it('returns 404 for an unknown order number', async () => {
    expect((await detailOf(sandbox, '500000000000')).status).toBe(404);
  });

  it('returns 400 naming order_no when it is not digits (an AWB is not an order number)', async () => {
    const res = await detailOf(sandbox, 'JN0000000001');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'order_no', message: expect.stringContaining('digits only') }]);
  });

  it('returns 400 naming order_no when it is longer than 32 digits, before any fault rule is matched against the path', async () => {
    // A rule's path glob is matched against each of the client's routed requests: a 15,000-digit path once reached it.
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path: `/v1/order/*${'1'.repeat(480)}2` }, action: { type: 'status', status: 503 } } })).status).toBe(201);
    const res = await detailOf(sandbox, '1'.repeat(33));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'order_no', message: expect.stringMatching(/32/) }]);
    expect((await detailOf(sandbox, '1'.repeat(32))).status).toBe(404);
  });

  it('answers 401 without a token', async () => {
    expect((await sandbox.call('GET', '/v1/order/500000000000', { token: null })).status).toBe(401);
  });

  it('does not shadow tracking, whose path has one more segment', async () => {
    const res = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001');
    expect(res.status).toBe(200);
    expect(res.body.last_status).toBe('2');
  });
});
