import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest, item } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';
import { cancel, DAY, detailOf, HOUR, MINUTE } from './orders.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

interface Area {
  district_id: string;
  city_name: string;
}

const searchOne = async (q: string, city: string): Promise<Area> => {
  const res = await sandbox.call('GET', `/v1/area/search?q=${encodeURIComponent(q)}`);
  const area = (res.body.data as Area[]).find((a) => a.city_name === city);
  expect(area, `${q} in ${city}`).toBeDefined();
  return area!;
};

describe('coverage, rates, create, detail and cancel agree', () => {
  it('an area found by search is accepted by create, priced by rates and shown by detail', async () => {
    const sender = await searchOne('tebet', 'Kota Jakarta Selatan');
    const receiver = await searchOne('sukasari', 'Kota Bandung');
    const parcel = { item_weight: '2.2', item_length: '40', item_width: '30', item_height: '20', item_value: '500000', insurance: '1', cod: '200000' };
    const created = await sandbox.call('POST', '/v1/order', {
      body: createRequest(1, {
        sender_addr_id: sender.district_id,
        courier_code: 'sicepat',
        items: [item({ receiver_addr_id: receiver.district_id, service_code: '2', ...parcel })],
      }),
    });
    expect(created.status).toBe(201);
    const orderNo = created.body.order_numbers[0] as string;

    const fee = await sandbox.call(
      'GET',
      `/v1/rates/shipping-fee?origin=${sender.district_id}&destination=${receiver.district_id}&weight=2.2&length=40&width=30&height=20&item_value=500000&insurance=1&cod=200000&courier_code=sicepat&service_code=2`,
    );
    const quote = fee.body.data.couriers[0];
    const service = quote.services[0];
    // 40×30×20/6000 = 4 kg > 2.2 kg; 12,000 × 4 × 1.7 = 81,600; insurance 1,000 + 5,000; COD 3% of 200,000 = 6,000
    expect(service).toMatchObject({ shipping_fee: 81_600, insurance_fee: 6_000, cod_fee: 6_000, total_fee: 93_600 });

    const estimation = await sandbox.call(
      'GET',
      `/v1/rates/estimation?sender_addr_id=${sender.district_id}&receiver_addr_id=${receiver.district_id}&item_weight=2.2&item_length=40&item_width=30&item_height=20&item_value=500000&insurance=1&cod=200000&courier_code=sicepat&service_code=2`,
    );
    expect(estimation.body.data).toEqual([expect.objectContaining({ weight: 4, price: 81_600, insurance_fee: 6_000, cod_fee: 6_000, total_price: 93_600 })]);

    const detail = await detailOf(sandbox, orderNo);
    expect(detail.body.data.sender_area).toEqual(sender);
    expect(detail.body.data.receiver_area).toEqual(receiver);
    expect(detail.body.data.rate).toEqual({
      chargeable_kg: quote.chargeable_kg,
      shipping_fee: service.shipping_fee,
      insurance_fee: service.insurance_fee,
      cod_fee: service.cod_fee,
      total_fee: service.total_fee,
    });
  });

  it('an area id that search does not know is refused by create and by rates alike', async () => {
    const search = await sandbox.call('GET', '/v1/area/search?q=999999');
    expect(search.body.data).toEqual([]);
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { sender_addr_id: '999999' }) });
    expect(created.body.errors).toEqual([{ field: 'sender_addr_id', message: expect.stringContaining('coverage data') }]);
    const fee = await sandbox.call('GET', '/v1/rates/shipping-fee?origin=999999&destination=327301&weight=1');
    expect(fee.body.errors).toEqual([{ field: 'origin', message: expect.stringContaining('coverage data') }]);
  });

  it('cancelling before pick-up stops the journey; after pick-up it is refused', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(2) });
    const [early, late] = created.body.order_numbers as [string, string];
    await sandbox.advance(MINUTE); // both get their AWB
    expect((await cancel(sandbox, { order_no: early })).status).toBe(200);
    await sandbox.advance(2 * HOUR); // the other is picked up
    expect((await cancel(sandbox, { order_no: late })).status).toBe(400);
    await sandbox.advance(3 * DAY);

    const earlyDetail = (await detailOf(sandbox, early)).body.data;
    const lateDetail = (await detailOf(sandbox, late)).body.data;
    expect(earlyDetail).toMatchObject({ status: 'cancelled', last_status: '5' });
    expect(lateDetail).toMatchObject({ status: 'delivered', last_status: '2', cancelled_at: null });
    const earlyTracking = await sandbox.call('GET', `/v1/order/tracking/${earlyDetail.awb}`);
    expect(earlyTracking.body.history.map((e: { status: string | null }) => e.status)).toEqual(['5']);
  });
});
