import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SIDE_CM, MAX_WEIGHT_KG } from '../../src/shared/index.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await testSandbox({
    clients: [
      { token: 'token-client-a', id: 'client-a' },
      { token: 'jne-only', id: 'jne-only', couriers: ['jne', 'sicepat'] },
    ],
  });
});
afterAll(() => sandbox.close());

interface ServiceQuote {
  service_code: string;
  shipping_fee: number;
  insurance_fee: number;
  cod_fee: number;
  total_fee: number;
}
interface CourierQuote {
  courier_code: string;
  available: boolean;
  unavailable_reason: string | null;
  chargeable_kg: number;
  services: ServiceQuote[];
}

/** Jakarta Selatan (zone A) to Bandung (zone A, another province): 12,000 per kg. */
const ROUTE = 'origin=317101&destination=327301';
const fee = async (query: string, token?: string) => sandbox.call('GET', `/v1/rates/shipping-fee?${query}`, token ? { token } : {});
const courier = (body: { data: { couriers: CourierQuote[] } }, code: string): CourierQuote => body.data.couriers.find((c) => c.courier_code === code)!;
const service = (quote: CourierQuote, code: string): ServiceQuote => quote.services.find((s) => s.service_code === code)!;

describe('GET /v1/couriers', () => {
  it('lists every courier with its services, codes as create accepts them', async () => {
    const res = await sandbox.call('GET', '/v1/couriers');
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { courier_code: string }) => c.courier_code)).toEqual(['jne', 'jnt', 'sicepat', 'anteraja', 'posindonesia']);
    expect(res.body.data[0]).toMatchObject({ courier_code: 'jne', courier_name: 'JNE Express', supports_cod: true });
    expect(res.body.data[0].services[0]).toEqual({ service_code: '1', service_name: 'REG', description: 'Regular service', etd_days_min: 2, etd_days_max: 3 });
  });

  it('lists only the couriers a limited client may use', async () => {
    const res = await sandbox.call('GET', '/v1/couriers', { token: 'jne-only' });
    expect(res.body.data.map((c: { courier_code: string }) => c.courier_code)).toEqual(['jne', 'sicepat']);
  });

  it('answers 401 without a token', async () => {
    expect((await sandbox.call('GET', '/v1/couriers', { token: null })).status).toBe(401);
  });
});

describe('GET /v1/rates/shipping-fee', () => {
  it('prices every courier service: rate per kg × chargeable kg × service multiplier', async () => {
    const res = await fee(`${ROUTE}&weight=1.5&length=30&width=20&height=10`);
    expect(res.status).toBe(200);
    expect(res.body.data.weight).toEqual({ actual_kg: 1.5, volumetric_kg: 1, chargeable_kg: 2 });
    expect(res.body.data.origin.district_id).toBe('317101');
    expect(res.body.data.destination.label).toBe('Sukasari, Kota Bandung, Jawa Barat 40154');
    expect(res.body.data.couriers).toHaveLength(5);
    const jne = courier(res.body, 'jne');
    expect(jne.services.map((s) => [s.service_code, s.shipping_fee, s.total_fee])).toEqual([
      ['1', 24_000, 24_000], // 12,000 × 2 × 1
      ['2', 43_200, 43_200], // × 1.8
      ['3', 19_200, 19_200], // × 0.8
    ]);
    expect(service(courier(res.body, 'sicepat'), '3').shipping_fee).toBe(18_000); // × 0.75
  });

  it.each([
    ['the same city', 'origin=317101&destination=317102', 8_000],
    ['the same province', 'origin=317101&destination=317201', 10_000],
    ['zone A to zone C', 'origin=317101&destination=127501', 24_000],
    ['zone A to zone D', 'origin=317101&destination=537101', 34_000],
    ['zone D to zone C', 'origin=537101&destination=127501', 26_000],
  ])('charges the tariff of %s per kg', async (_, route, perKg) => {
    const res = await fee(`${route}&weight=1&courier_code=jne&service_code=1`);
    expect(res.body.data.couriers).toEqual([expect.objectContaining({ courier_code: 'jne', services: [expect.objectContaining({ shipping_fee: perKg })] })]);
  });

  it('is deterministic: the same question gets the same answer', async () => {
    const a = await fee(`${ROUTE}&weight=2.7&length=12&width=12&height=12`);
    const b = await fee(`${ROUTE}&weight=2.7&length=12&width=12&height=12`);
    expect(a.body).toEqual(b.body);
  });

  it('charges the volumetric weight of a light, bulky parcel', async () => {
    const res = await fee(`${ROUTE}&weight=1&length=40&width=30&height=20&courier_code=jne&service_code=1`);
    expect(res.body.data.weight.chargeable_kg).toBe(4);
    expect(courier(res.body, 'jne').services[0]!.shipping_fee).toBe(48_000);
  });

  it('adds insurance of 0.2% of the value plus 5,000, rounded up to 100', async () => {
    const res = await fee(`${ROUTE}&weight=1&item_value=1234567&insurance=1&courier_code=jne&service_code=1`);
    expect(courier(res.body, 'jne').services[0]).toMatchObject({ shipping_fee: 12_000, insurance_fee: 7_500, cod_fee: 0, total_fee: 19_500 });
  });

  it('charges no insurance when insurance is 0, whatever the value', async () => {
    const res = await fee(`${ROUTE}&weight=1&item_value=1234567&insurance=0&courier_code=jne&service_code=1`);
    expect(courier(res.body, 'jne').services[0]!.insurance_fee).toBe(0);
  });

  it('adds a COD fee of 3% (at least 2,500) and marks couriers without COD unavailable', async () => {
    const res = await fee(`${ROUTE}&weight=1&cod=325000`);
    expect(service(courier(res.body, 'jne'), '1')).toMatchObject({ cod_fee: 9_800, total_fee: 21_800 });
    expect(courier(res.body, 'posindonesia')).toMatchObject({ available: false, unavailable_reason: 'Pos Indonesia does not offer cash on delivery', services: [] });
    const small = await fee(`${ROUTE}&weight=1&cod=50000&courier_code=jne&service_code=1`);
    expect(courier(small.body, 'jne').services[0]!.cod_fee).toBe(2_500);
  });

  it('prices only the couriers a limited client may use', async () => {
    const res = await fee(`${ROUTE}&weight=1`, 'jne-only');
    expect(res.body.data.couriers.map((c: CourierQuote) => c.courier_code)).toEqual(['jne', 'sicepat']);
  });

  it.each([
    ['destination=327301&weight=1', 'origin', 'is required'],
    ['origin=317101&weight=1', 'destination', 'is required'],
    [ROUTE, 'weight', 'is required'],
    [`${ROUTE}&weight=heavy`, 'weight', 'numeric text such as "1.5"'],
    [`${ROUTE}&weight=0`, 'weight', 'above 0'],
    [`${ROUTE}&weight=1&length=-3`, 'length', 'numeric text'],
    [`${ROUTE}&weight=1&insurance=yes`, 'insurance', 'one of: 0, 1'],
    [`${ROUTE}&weight=1&cod=lots`, 'cod', 'numeric text'],
    ['origin=999999&destination=327301&weight=1', 'origin', 'not a district id of the coverage data'],
    ['origin=317101&destination=31&weight=1', 'destination', 'not a district id of the coverage data'],
    [`${ROUTE}&weight=1&courier_code=dhl`, 'courier_code', 'must be one of: jne'],
    [`${ROUTE}&weight=1&courier_code=jne&service_code=9`, 'service_code', 'not a service of jne'],
    [`${ROUTE}&weight=1&service_code=1`, 'service_code', 'needs courier_code'],
    [`${ROUTE}&weight=${'9'.repeat(400)}`, 'weight', 'must be at most 1000000 kg'],
    [`${ROUTE}&weight=1&item_value=1000000000000`, 'item_value', 'must be at most 999999999999'],
    [`${ROUTE}&weight=1000000.01`, 'weight', 'must be at most 1000000 kg'],
    [`${ROUTE}&weight=1&length=99999999999`, 'length', 'must be at most 10000 cm'],
    [`${ROUTE}&weight=1&width=10000.1`, 'width', 'must be at most 10000 cm'],
    [`${ROUTE}&weight=1&height=10001`, 'height', 'must be at most 10000 cm'],
    [`${ROUTE}&weight[]=1`, 'weight', 'must be given once, as plain text'],
    [`${ROUTE}&weight=1&weight[]=2`, 'weight', 'must be given once, as plain text'],
    [`${ROUTE}&weight=1&cod[x]=5000`, 'cod', 'must be given once, as plain text'],
    // Given twice, a number parameter is a list: told so, not that it is not a number.
    [`${ROUTE}&weight=1&weight=2`, 'weight', 'must be given once, as plain text'],
  ])('returns 400 for ?%s naming %s', async (query, field, message) => {
    const res = await fee(query);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
  });

  it.each([
    ['the largest weight', `weight=${MAX_WEIGHT_KG}`],
    ['the largest sides', `weight=1&length=${MAX_SIDE_CM}&width=${MAX_SIDE_CM}&height=${MAX_SIDE_CM}`],
  ])('answers every fee as an exact whole number of rupiah at %s it takes, on the dearest route', async (_, parcel) => {
    for (const money of ['item_value=999999999999&insurance=1', 'cod=999999999999']) {
      const res = await fee(`origin=317101&destination=537101&${parcel}&${money}`);
      expect(res.status).toBe(200);
      for (const quote of res.body.data.couriers as CourierQuote[]) {
        expect(Number.isSafeInteger(quote.chargeable_kg)).toBe(true);
        for (const s of quote.services) {
          // Exact below 2^53 even in the fee's intermediate figure (rupiah × 100).
          expect([s.shipping_fee * 100, s.insurance_fee, s.cod_fee, s.total_fee].every(Number.isSafeInteger)).toBe(true);
        }
      }
    }
  });

  it('returns 403 for a courier the client may not use', async () => {
    const res = await fee(`${ROUTE}&weight=1&courier_code=jnt`, 'jne-only');
    expect(res.status).toBe(403);
    expect(res.body.errors).toEqual([{ field: 'courier_code', message: 'not enabled for this client' }]);
  });
});

describe('GET /v1/rates/estimation', () => {
  const query = 'sender_addr_id=317101&receiver_addr_id=327301&item_weight=1.5&item_length=30&item_width=20&item_height=10&item_value=150000&insurance=1';

  it('answers the figures of the shipping fee as one list of services, cheapest first', async () => {
    const estimation = await sandbox.call('GET', `/v1/rates/estimation?${query}`);
    const shipping = await fee(`${ROUTE}&weight=1.5&length=30&width=20&height=10&item_value=150000&insurance=1`);
    expect(estimation.status).toBe(200);
    const expected = (shipping.body.data.couriers as CourierQuote[]).flatMap((c) =>
      c.services.map((s) => ({ courier_code: c.courier_code, service_code: s.service_code, weight: c.chargeable_kg, price: s.shipping_fee, insurance_fee: s.insurance_fee, cod_fee: s.cod_fee, total_price: s.total_fee })),
    );
    const got = estimation.body.data.map(({ courier_code, service_code, weight, price, insurance_fee, cod_fee, total_price }: Record<string, unknown>) => ({ courier_code, service_code, weight, price, insurance_fee, cod_fee, total_price }));
    expect(got).toHaveLength(expected.length);
    expect(got).toEqual(expect.arrayContaining(expected));
    const totals = got.map((r: { total_price: number }) => r.total_price);
    expect(totals).toEqual([...totals].sort((a, b) => a - b));
    expect(estimation.body.data[0]).toMatchObject({ courier_code: 'sicepat', service_name: 'HALU', etd: '3-5 days', price: 18_000, insurance_fee: 5_300, total_price: 23_300 });
  });

  it('leaves out the couriers that cannot carry a COD parcel', async () => {
    const res = await sandbox.call('GET', `/v1/rates/estimation?${query}&cod=100000`);
    expect(res.body.data.map((r: { courier_code: string }) => r.courier_code)).not.toContain('posindonesia');
    expect(res.body.data.length).toBeGreaterThan(0);
  });

  it('prices one service of one courier', async () => {
    const res = await sandbox.call('GET', `/v1/rates/estimation?${query}&courier_code=jne&service_code=2`);
    expect(res.body.data).toEqual([expect.objectContaining({ courier_code: 'jne', service_code: '2', service_name: 'YES', price: 43_200 })]);
  });

  it.each([
    ['receiver_addr_id=327301&item_weight=1', 'sender_addr_id', 'is required'],
    ['sender_addr_id=317101&receiver_addr_id=1&item_weight=1', 'receiver_addr_id', 'not a district id'],
    ['sender_addr_id=317101&receiver_addr_id=327301&item_weight=1,5', 'item_weight', 'numeric text'],
    ['sender_addr_id=317101&receiver_addr_id=327301&item_weight=0.0', 'item_weight', 'above 0'],
    ['sender_addr_id=317101&receiver_addr_id=327301&item_weight=1&item_height=tall', 'item_height', 'numeric text'],
    ['sender_addr_id=317101&receiver_addr_id=327301&item_weight=1&item_width=99999999999', 'item_width', 'must be at most 10000 cm'],
  ])('returns 400 for ?%s naming %s (the names of a create request)', async (q, field, message) => {
    const res = await sandbox.call('GET', `/v1/rates/estimation?${q}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
  });

  it('returns 403 for a courier the client may not use', async () => {
    const res = await sandbox.call('GET', `/v1/rates/estimation?${query}&courier_code=posindonesia`, { token: 'jne-only' });
    expect(res.status).toBe(403);
  });
});
