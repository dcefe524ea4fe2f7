import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

// One sandbox for the file: the tests only read, but for one order of their own.
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.close());

const SPECS = ['/__sandbox/openapi.json', '/__sandbox/control.openapi.json'];
/** Keys whose value may be null on purpose: example data and schema keywords that take any value. */
const VALUE_KEYS = new Set(['example', 'examples', 'default', 'const', 'enum']);

/** Paths (a/b/c) of every null value outside example data: a YAML flow mapping cut short leaves one. */
function nullKeys(node: unknown, path: string[] = []): string[] {
  if (node === null) return [path.join('/')];
  if (typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => (VALUE_KEYS.has(key) ? [] : nullKeys(value, [...path, key])));
}

/** Every value of `key` in a JSON tree. */
function valuesOf(node: unknown, key: string): unknown[] {
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([k, v]) => [...(k === key ? [v] : []), ...valuesOf(v, key)]);
}

describe.each(SPECS)('GET %s', (path) => {
  it('has no key whose value is null outside example data', async () => {
    const res = await sandbox.call('GET', path);
    expect(nullKeys(res.body)).toEqual([]);
  });

  it('keeps descriptions whole: none stops at a comma', async () => {
    const res = await sandbox.call('GET', path);
    const json = JSON.stringify(res.body);
    expect(json).not.toContain('"null before the first scan with a status.":null');
    expect(valuesOf(res.body, 'description').filter((d) => typeof d === 'string' && /\($/.test(d.trim()))).toEqual([]);
  });

  it('names the address it was fetched from in servers', async () => {
    const res = await sandbox.call('GET', path, { headers: { Host: 'sandbox.test:4321' } });
    expect(res.body.servers).toEqual([{ url: 'http://sandbox.test:4321', description: expect.any(String) }]);
  });
});

describe('objects a client receives have typed properties', () => {
  it.each([
    ['/__sandbox/openapi.json', 'OrderDetail', 'sender'],
    ['/__sandbox/control.openapi.json', 'OrderState', 'sender'],
    ['/__sandbox/control.openapi.json', 'OrderState', 'item'],
    ['/__sandbox/control.openapi.json', 'WebhookDelivery', 'payload'],
    ['/__sandbox/control.openapi.json', 'JournalEntry', 'query'],
  ])('%s: %s.%s', async (path, schema, property) => {
    const document = (await sandbox.call('GET', path)).body;
    let node = document.components.schemas[schema].properties[property];
    if (node.$ref) node = document.components.schemas[node.$ref.split('/').at(-1)];
    expect(node.type).toBe('object');
    expect(Object.keys(node.properties ?? {}).length > 0 || typeof node.additionalProperties === 'object').toBe(true);
  });
});

describe('every status an operation answers is documented', () => {
  it.each(['/v1/area/provinces', '/v1/couriers'])('GET %s answers a bad Prefer with the documented 400', async (path) => {
    const res = await sandbox.call('GET', path, { headers: { Prefer: 'code=999' } });
    expect(res.status).toBe(400);
    // sandbox.call checks every answer against the spec: an undocumented 400 would fail there.
    expect(res.body.errors[0].field).toBe('header.prefer');
  });

  it('GET /__sandbox/pod/x.jpg answers the documented 400', async () => {
    const res = await sandbox.call('GET', '/__sandbox/pod/x.jpg', { token: null });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('file');
  });

  it('lists each example once in the 400 of an unknown example name', async () => {
    const res = await sandbox.call('GET', '/v1/order/tracking/JN0000000001', { headers: { Prefer: 'example=lost' } });
    const names = (res.body.errors[0].message as string).replace('example must be one of: ', '').split(', ');
    expect(names).toEqual([...new Set(names)]);
    expect(names).toContain('delivered (200)');
  });
});

describe('GET /__sandbox/pod/{file}', () => {
  const pod = (awb: string) => sandbox.call('GET', `/__sandbox/pod/${awb}.png`, { token: null });

  it('answers 404 for an AWB that does not exist', async () => {
    expect((await pod('NOPE1')).status).toBe(404);
  });

  it('answers 404 for an order that has not been delivered, and the photo once it has, at the address its tracking gives', async () => {
    const orderNo = (await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).body.order_numbers[0];
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const awb = (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.awb;
    expect((await pod(awb)).status).toBe(404);
    let played = 200;
    while (played === 200) played = (await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`)).status;
    const url = new URL((await sandbox.call('GET', `/v1/order/tracking/${awb}`)).body.history[0].pod_photo);
    expect(url.pathname).toMatch(new RegExp(`^/__sandbox/pod/${awb}-[0-9a-f]{20}\\.png$`));
    const photo = await sandbox.call('GET', url.pathname, { token: null });
    expect(photo.status).toBe(200);
    expect(photo.headers['content-type']).toBe('image/png');
    // The control API's view of the order gives the same address.
    expect(new URL((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.history[0].pod_photo).pathname).toBe(url.pathname);
  });

  it('answers 404 for a delivered AWB named without its tag, or with another AWB\'s: an AWB alone tells nobody whether it exists', async () => {
    const delivered = async () => {
      const orderNo = (await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).body.order_numbers[0];
      await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
      while ((await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`)).status === 200);
      const awb = (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.awb as string;
      return { awb, path: new URL((await sandbox.call('GET', `/v1/order/tracking/${awb}`)).body.history[0].pod_photo).pathname };
    };
    const first = await delivered();
    const second = await delivered();
    expect((await pod(first.awb)).status).toBe(404);
    expect((await pod('JN0000000000')).status).toBe(404);
    const secondTag = second.path.slice(second.path.lastIndexOf('-'));
    expect((await sandbox.call('GET', `/__sandbox/pod/${first.awb}${secondTag}`, { token: null })).status).toBe(404);
    expect((await sandbox.call('GET', first.path, { token: null })).status).toBe(200);
  });

  it('answers the photo of a delivered magic AWB, and 404 for the stuck one', async () => {
    expect((await pod('SBXDLV00000001')).status).toBe(200);
    expect((await pod('SBXSTK00000004')).status).toBe(404);
  });
});

describe('the spec agrees with the sandbox', () => {
  it('names only scenarios that exist', async () => {
    const names = (await sandbox.call('GET', '/__sandbox/scenarios')).body.map((s: { name: string }) => s.name);
    const provider = JSON.stringify((await sandbox.call('GET', '/__sandbox/openapi.json')).body);
    const named = [...provider.matchAll(/scenario (\w+)\)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect(names).toContain(name);
  });

  it('answers Prefer: code=403 to the shipped examples/order.json with a 403 about its own courier', async () => {
    const order = JSON.parse(readFileSync(new URL('../../examples/order.json', import.meta.url), 'utf8'));
    const res = await sandbox.call('POST', '/v1/order', { body: order, headers: { Prefer: 'code=403' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain(`"${order.courier_code}"`);
  });

  it('shows example AWBs of jne in the form the sandbox makes them (JN + 10 digits)', async () => {
    const provider = (await sandbox.call('GET', '/__sandbox/openapi.json')).body;
    const awbs = valuesOf(provider, 'awb').filter((v): v is string => typeof v === 'string');
    expect(awbs.length).toBeGreaterThan(0);
    for (const awb of awbs) expect(awb).toMatch(/^(JN[0-9]{10}|SBX[A-Z]{3}[0-9]{8})$/);
  });
});
