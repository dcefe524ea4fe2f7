import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest, item, specExample } from '../support/orders.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox({
    clients: [
      { token: 'token-client-a', id: 'client-a' },
      { token: TOKEN_B, id: 'client-b' },
      { token: 'jne-only', id: 'jne-only', couriers: ['jne'] },
      { token: 'reader', id: 'reader', read_only: true },
    ],
  });
});
afterEach(() => sandbox.close());

describe('POST /v1/order', () => {
  it('accepts the create request example of the spec as it stands', async () => {
    const res = await sandbox.call('POST', '/v1/order', { body: specExample() });
    expect(res.status).toBe(201);
    expect(res.body.order_numbers).toHaveLength(2);
  });

  it.each([1, 5])('answers 201 with a batch id and one order number per item for %i item(s)', async (count) => {
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(count) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      message: expect.stringContaining('waybill'),
      batch_id: expect.stringMatching(/^\d+$/),
      order_numbers: expect.any(Array),
    });
    expect(res.body.order_numbers).toHaveLength(count);
    expect(new Set(res.body.order_numbers).size).toBe(count);
    for (const n of res.body.order_numbers) expect(n).toMatch(/^\d+$/);
    expect(res.body).not.toHaveProperty('awb');
  });

  it('stores one order per item, in item order, with no AWB yet', async () => {
    const body = createRequest(3);
    const res = await sandbox.call('POST', '/v1/order', { body });
    for (const [i, orderNo] of (res.body.order_numbers as string[]).entries()) {
      const state = await sandbox.call('GET', `/__sandbox/orders/${orderNo}`);
      expect(state.body).toMatchObject({ order_no: orderNo, order_code: body.items[i]!.order_code, awb: null, status: 'created', batch_id: res.body.batch_id });
    }
  });

  it('returns 400 naming input_type above 2^53 - 1, which would be stored as another number', async () => {
    for (const sent of ['9007199254740993', '18446744073709551615']) {
      const res = await sandbox.call('POST', '/v1/order', {
        body: JSON.stringify(createRequest(1)).replace(/"input_type":\d+/, `"input_type":${sent}`),
        headers: { 'Content-Type': 'application/json' },
      });
      expect([res.status, res.body.errors]).toEqual([400, [{ field: 'input_type', message: 'must be <= 9007199254740991' }]]);
    }
    const largest = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { input_type: 9007199254740991 }) });
    expect(largest.status).toBe(201);
    const detail = await sandbox.call('GET', `/v1/order/${largest.body.order_numbers[0]}`);
    expect(detail.body.data.sender.input_type).toBe(9007199254740991);
  });

  it.each(['item_value', 'cod', 'item_qty'])('returns 400 naming items[0].%s when it is above 999999999999 (400 nines read as Infinity)', async (field) => {
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [item({ [field]: '9'.repeat(400) })] }) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ field: `items[0].${field}`, message: 'must be at most 999999999999' });
  });

  // Above these a parcel's fees pass 2^53 and are no longer exact whole rupiah.
  it.each([
    ['item_weight', '1000000.001', 'must be at most 1000000 kg'],
    ['item_weight', '99999999999999999999', 'must be at most 1000000 kg'],
    ['item_length', '10001', 'must be at most 10000 cm'],
    ['item_width', '99999999999', 'must be at most 10000 cm'],
    ['item_height', '10000.5', 'must be at most 10000 cm'],
  ])('returns 400 naming items[0].%s when it is %s, above the largest parcel the sandbox prices', async (field, value, message) => {
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [item({ [field]: value })] }) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: `items[0].${field}`, message }]);
  });

  it('prices a 200 kg parcel of 300 cm sides worth 999999999999 rupiah in exact whole rupiah', async () => {
    const big = item({ item_weight: '200', item_length: '300', item_width: '300', item_height: '300', item_value: '999999999999', insurance: '1', cod: '999999999999' });
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [big] }) });
    expect(res.status).toBe(201);
    const detail = await sandbox.call('GET', `/v1/order/${res.body.order_numbers[0]}`);
    // 300³ / 6000 = 4,500 kg × 12,000 (Jakarta to Bandung); 0.2% of the value + 5,000; 3% of the COD.
    expect(detail.body.data.rate).toEqual({ chargeable_kg: 4_500, shipping_fee: 54_000_000, insurance_fee: 2_000_005_000, cod_fee: 30_000_000_000, total_fee: 32_054_005_000 });
  });

  it('accepts fields it does not know and ignores them: neither stored nor answered, and the known ones kept as sent', async () => {
    const junk = 'x'.repeat(50_000);
    const body = { ...createRequest(2), sender_extra: junk, items: createRequest(2).items.map((i) => ({ ...i, item_extra: junk })) };
    const res = await sandbox.call('POST', '/v1/order', { body });
    expect(res.status).toBe(201);
    for (const [i, orderNo] of (res.body.order_numbers as string[]).entries()) {
      const views = [await sandbox.call('GET', `/__sandbox/orders/${orderNo}`), await sandbox.call('GET', `/v1/order/${orderNo}`)];
      for (const view of views) {
        expect(view.status).toBe(200);
        expect(JSON.stringify(view.body)).not.toContain('_extra');
      }
      const stored = await sandbox.services.storage.orders.get(orderNo);
      expect(Object.keys(stored!.sender)).not.toContain('sender_extra');
      expect(stored!.sender).toMatchObject({ sender_name: body.sender_name, sender_address: body.sender_address });
      expect(stored!.item).toEqual(createRequest(2).items[i]);
    }
  });

  it('keeps an order whose text holds a NUL, on every store (half a surrogate pair alone is refused: see http-errors)', async () => {
    // PostgreSQL's text holds no NUL: the store writes U+FFFD there instead of failing the create (a 500).
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { sender_name: 'Toko Maju\u0000' }) });
    expect(res.status).toBe(201);
    const state = await sandbox.call('GET', `/__sandbox/orders/${res.body.order_numbers[0]}`);
    expect(state.status).toBe(200);
    expect(JSON.stringify(state.body)).toMatch(/Toko Maju(\\u0000|\uFFFD)/);
    const journal = await sandbox.call('GET', '/__sandbox/requests?operation_id=createOrder');
    expect(journal.body.requests.at(-1)).toMatchObject({ status: 201 });
  });

  describe('JSON types of part 2: every scalar is a string except input_type', () => {
    const sender = ['sender_name', 'sender_addr_id', 'sender_address', 'sender_phone', 'pickup_via', 'order_type', 'courier_code', 'sender_latitude', 'sender_longitude'];
    it.each(sender)('returns 400 naming %s when it is sent as a number', async (field) => {
      const res = await sandbox.call('POST', '/v1/order', { body: { ...createRequest(1), [field]: 12345 } });
      expect(res.status).toBe(400);
      expect(res.body.errors).toContainEqual({ field, message: expect.stringContaining('JSON string') });
    });

    const itemFields = ['order_code', 'receiver_name', 'receiver_phone', 'receiver_address', 'receiver_addr_id', 'service_code', 'item_width', 'item_height', 'item_length', 'item_value', 'item_weight', 'item_qty', 'item_name', 'item_category', 'insurance', 'cod'];
    it.each(itemFields)('returns 400 naming items[0].%s when it is sent as a number', async (field) => {
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [{ ...item(), [field]: 1 }] }) });
      expect(res.status).toBe(400);
      expect(res.body.errors).toContainEqual({ field: `items[0].${field}`, message: expect.stringContaining('JSON string') });
    });

    it('names the first 100 fields of a create that breaks more, in item order', async () => {
      const items = Array.from({ length: 60 }, () => ({ ...item(), item_weight: 1, item_qty: 1 }));
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: items as never }) });
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveLength(100);
      expect(res.body.errors.slice(0, 2).map((e: { field: string }) => e.field)).toEqual(['items[0].item_weight', 'items[0].item_qty']);
      expect(res.body.errors.at(-1).field).toBe('items[49].item_qty');
    });

    it('hints at numbers as text only for a number sent where text is wanted, not for a null or a list', async () => {
      const number = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [item({ item_weight: 1.5 as never })] }) });
      expect(number.body.errors).toContainEqual({ field: 'items[0].item_weight', message: 'must be a JSON string (send numbers as text, for example "1")' });
      const nothing = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [item({ item_weight: null as never, item_name: ['a'] as never })] }) });
      expect(nothing.body.errors).toEqual(expect.arrayContaining([{ field: 'items[0].item_weight', message: 'must be a JSON string' }, { field: 'items[0].item_name', message: 'must be a JSON string' }]));
      const url = await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: null } });
      expect(url.body.errors).toEqual([{ field: 'url', message: 'must be a JSON string' }]);
    });

    it('returns 400 naming input_type when it is sent as text', async () => {
      const res = await sandbox.call('POST', '/v1/order', { body: { ...createRequest(1), input_type: '1' } });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'input_type', message: expect.stringContaining('JSON integer') }]);
    });

    it('returns 400 when items is not an array', async () => {
      const res = await sandbox.call('POST', '/v1/order', { body: { ...createRequest(1), items: {} } });
      expect(res.body.errors).toContainEqual({ field: 'items', message: 'must be a JSON array' });
    });
  });

  describe('value rules', () => {
    it.each([
      ['item_weight', 'heavy', 'numeric text such as "1.5"'],
      ['item_weight', '1.', 'a point only between digits'],
      ['item_weight', '-3', 'numeric text such as "1.5" or "2" (digits, a point only between digits, no sign)'],
      ['item_qty', '1.5', 'digits only'],
      ['receiver_phone', '12-34', 'phone number'],
      ['receiver_name', '', 'must not be empty'],
    ])('returns 400 naming items[1].%s when it is %j', async (field, value, message) => {
      const body = createRequest(2);
      (body.items[1] as unknown as Record<string, unknown>)[field] = value;
      const res = await sandbox.call('POST', '/v1/order', { body });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: `items[1].${field}`, message: expect.stringContaining(message) }]);
    });

    it.each([
      ['sender_latitude', '91'],
      ['sender_latitude', '-99.5'],
      ['sender_latitude', '90.0001'],
      ['sender_longitude', '181'],
      ['sender_longitude', '-180.5'],
      ['sender_longitude', '999'],
    ])('returns 400 naming %s when it is %j, outside the range of decimal degrees', async (field, value) => {
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { [field]: value }) });
      expect(res.status).toBe(400);
      const range = field === 'sender_latitude' ? 'from -90 to 90' : 'from -180 to 180';
      expect(res.body.errors).toEqual([{ field, message: expect.stringContaining(`decimal degrees ${range}`) }]);
    });

    it.each([
      ['90', '180'],
      ['-90.000', '-180.0'],
      ['0', '0'],
      ['-6.2297', '106.8531'],
      ['09', '099'],
    ])('accepts latitude %j and longitude %j', async (sender_latitude, sender_longitude) => {
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { sender_latitude, sender_longitude }) });
      expect(res.status).toBe(201);
    });

    it('names every missing required field', async () => {
      const { sender_name: _, ...body } = createRequest(1);
      const { receiver_phone: __, ...bareItem } = item();
      const res = await sandbox.call('POST', '/v1/order', { body: { ...body, items: [item(), bareItem] } });
      expect(res.body.errors).toEqual(
        expect.arrayContaining([
          { field: 'sender_name', message: 'is required' },
          { field: 'items[1].receiver_phone', message: 'is required' },
        ]),
      );
    });

    it('returns 400 when items is empty', async () => {
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(0) });
      expect(res.body.errors).toEqual([{ field: 'items', message: 'must hold at least 1 entry' }]);
    });

    it('returns 400 above the configured item limit', async () => {
      await sandbox.close();
      sandbox = await testSandbox({ maxItems: 3 });
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(4) });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'items', message: 'must hold at most 3 entries' }]);
    });

    it('returns 400 for an unknown courier, listing the known ones', async () => {
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { courier_code: 'dhl' }) });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'courier_code', message: expect.stringContaining('jne') }]);
    });

    it('returns 400 naming area ids that are not in the coverage data', async () => {
      const res = await sandbox.call('POST', '/v1/order', {
        body: createRequest(1, { sender_addr_id: '999999', items: [item(), item({ receiver_addr_id: '1' })] }),
      });
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['sender_addr_id', 'items[1].receiver_addr_id']);
    });

    it('returns 400 for a service the courier does not offer', async () => {
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [item({ service_code: '99' })] }) });
      expect(res.body.errors).toEqual([{ field: 'items[0].service_code', message: expect.stringContaining('not a service of jne') }]);
    });

    it('returns 400 for an unknown X-Sandbox-Scenario, listing the valid names', async () => {
      const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { 'X-Sandbox-Scenario': 'teleported' } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain('delivered');
      expect(res.body.errors[0].message).toContain('returned');
    });
  });

  describe('permissions', () => {
    it('returns 403 when the client is not enabled for the courier', async () => {
      const res = await sandbox.call('POST', '/v1/order', { token: 'jne-only', body: createRequest(1, { courier_code: 'jnt', items: [item({ service_code: '1' })] }) });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, errors: [{ field: 'courier_code' }] });
    });

    it('lets that client use its own courier', async () => {
      const res = await sandbox.call('POST', '/v1/order', { token: 'jne-only', body: createRequest(1) });
      expect(res.status).toBe(201);
    });

    it('returns 403 to a read-only token', async () => {
      const res = await sandbox.call('POST', '/v1/order', { token: 'reader', body: createRequest(1) });
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('read-only');
    });
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', null, undefined],
      ['an unknown token', 'not-a-token', undefined],
      ['a non-Bearer scheme', null, 'Basic dXNlcjpwYXNz'],
      ['an empty Bearer', null, 'Bearer '],
    ])('returns 401 with WWW-Authenticate for %s', async (_, token, header) => {
      const res = await sandbox.call('POST', '/v1/order', { token, body: createRequest(1), headers: header ? { Authorization: header } : {} });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body.success).toBe(false);
    });
  });
});
