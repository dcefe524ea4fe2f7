import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { resolveOptions } from '../../src/config/index.js';
import { withSandboxAnswers } from '../../src/spec/sandbox-answers.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';
import { onPostgres } from '../support/store-kind.js';

// As served: with the 429 and 431 every operation may answer.
const spec = parse(readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8'));
withSandboxAnswers(spec, resolveOptions({}));
const components = spec.components.responses;
const CREATED = spec.paths['/v1/order'].post.responses['201'].content['application/json'].examples.created.value;
const DELIVERED = spec.paths['/v1/order/tracking/{order_no}'].get.responses['200'].content['application/json'].examples.delivered.value;
const BAD_REQUEST = components.BadRequest.content['application/json'].examples.invalidField.value;
/** A tracking read's own 400 example: it names the AWB in the path, not a create's field. */
const TRACKING_BAD_REQUEST = components.TrackingBadRequest.content['application/json'].examples.invalidAwb.value;
const FORBIDDEN = components.Forbidden.content['application/json'].examples.courierNotEnabled.value;
const NOT_FOUND = components.NotFound.content['application/json'].examples.notFound.value;
const UNAUTHORIZED = components.Unauthorized.content['application/json'].examples.missingToken.value;

const TRACK = '/v1/order/tracking/SBXNOSUCH0001';

type Tracking = { history: Array<{ pod_photo: string | null }> };
/** A tracking example as the sandbox answers it: its photo links on the address of the answer's own links (see the finer points). */
const onThisSandbox = (example: Tracking, answer: Tracking): Tracking => {
  const origin = new URL(answer.history.find((e) => e.pod_photo)!.pod_photo!).origin;
  return { ...example, history: example.history.map((e) => ({ ...e, pod_photo: e.pod_photo && origin + new URL(e.pod_photo).pathname })) };
};
/** The status codes the spec documents for an operation, as the 400 lists them. */
const documented = (path: string, method: string): string =>
  Object.keys(spec.paths[path][method].responses).map(Number).sort((a, b) => a - b).join(', ');

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

/** Sends a request with a preference, either as the Prefer header or as query fallbacks. */
function prefer(form: 'header' | 'query', method: string, path: string, preference: Record<string, string>, body?: unknown) {
  if (form === 'header') {
    const header = Object.entries(preference).map(([k, v]) => `${k}=${v}`).join(', ');
    return sandbox.call(method, path, { body, headers: { Prefer: header } });
  }
  const query = new URLSearchParams(Object.entries(preference).map(([k, v]) => [`__${k}`, v])).toString();
  return sandbox.call(method, `${path}?${query}`, { body });
}

async function orderCount(): Promise<number> {
  return (await sandbox.call('GET', '/__sandbox/orders')).body.total;
}

describe.each(['header', 'query'] as const)('errors on demand with the %s form', (form) => {
  describe('POST /v1/order', () => {
    it.each([
      [400, BAD_REQUEST],
      [403, FORBIDDEN],
      [401, UNAUTHORIZED],
    ])('answers code=%i with its documented example', async (code, example) => {
      const res = await prefer(form, 'POST', '/v1/order', { code: String(code) }, createRequest(1));
      expect(res.status).toBe(code);
      expect(res.body).toEqual(example);
    });

    it('answers code=201 with the documented example and stores nothing', async () => {
      const res = await prefer(form, 'POST', '/v1/order', { code: '201' }, createRequest(2));
      expect(res.status).toBe(201);
      expect(res.body).toEqual(CREATED);
      expect(await orderCount()).toBe(0);
    });

    it.each([
      [413, 'body', /larger than this sandbox's limit/],
      [415, 'header.content-type', /must be sent as application\/json/],
      [431, 'header', /request headers are larger than the limit/],
    ])('answers code=%i (a status the sandbox adds to every operation) with an example of its real answer, naming %s', async (code, field, message) => {
      const res = await prefer(form, 'POST', '/v1/order', { code: String(code) }, createRequest(1));
      expect(res.status).toBe(code);
      expect(res.body).toEqual({ success: false, message: expect.stringMatching(message), errors: [{ field, message: expect.any(String) }] });
    });

    it('answers code=429 with an example of the 429 this sandbox can give (without --rate-limit, that of too many requests waiting)', async () => {
      const res = await prefer(form, 'POST', '/v1/order', { code: '429' }, createRequest(1));
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ success: false, message: expect.stringMatching(/requests waiting for their turn/), errors: [] });
    });

    it('answers example=created with that example, one order number per item as a create has', async () => {
      const one = await prefer(form, 'POST', '/v1/order', { example: 'created' }, createRequest(1));
      expect(one.status).toBe(201);
      expect(one.body).toEqual({ ...CREATED, order_numbers: CREATED.order_numbers.slice(0, 1) });
      const five = await prefer(form, 'POST', '/v1/order', { example: 'created' }, createRequest(5));
      expect(five.body.order_numbers).toHaveLength(5);
      expect(five.body.order_numbers.slice(0, 2)).toEqual(CREATED.order_numbers);
      expect(new Set(five.body.order_numbers).size).toBe(5);
      expect(five.body.order_numbers.every((n: string) => /^[0-9]{12}$/.test(n))).toBe(true);
    });

    it('answers dynamic=true with data generated from the schema, storing nothing', async () => {
      const res = await prefer(form, 'POST', '/v1/order', { dynamic: 'true' }, createRequest(1));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ success: true, batch_id: expect.stringMatching(/^[0-9]+$/) });
      expect(res.body).not.toEqual(CREATED);
      expect(await orderCount()).toBe(0);
    });

    it('returns 400 listing the documented codes for code=418', async () => {
      const res = await prefer(form, 'POST', '/v1/order', { code: '418' }, createRequest(1));
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { field: form === 'header' ? 'header.prefer' : 'query.__code', message: `code must be one of: ${documented('/v1/order', 'post')}` },
      ]);
    });
  });

  describe('GET /v1/order/tracking/{order_no}', () => {
    it('answers code=404 with the documented example', async () => {
      const res = await prefer(form, 'GET', TRACK, { code: '404' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    });

    it('answers code=200 for an AWB that does not exist, with the documented example', async () => {
      const res = await prefer(form, 'GET', TRACK, { code: '200' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(onThisSandbox(DELIVERED, res.body));
    });

    it('answers code=400 with the documented example', async () => {
      const res = await prefer(form, 'GET', TRACK, { code: '400' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(TRACKING_BAD_REQUEST);
      expect(res.body.errors).toEqual([{ field: 'order_no', message: 'must be letters, digits and dashes only' }]);
    });

    it('answers example=delivered with that example', async () => {
      const res = await prefer(form, 'GET', TRACK, { example: 'delivered' });
      expect(res.body).toEqual(onThisSandbox(DELIVERED, res.body));
    });

    it('answers dynamic=true with a generated tracking history', async () => {
      const res = await prefer(form, 'GET', TRACK, { dynamic: 'true' });
      expect(res.status).toBe(200);
      expect(res.body.history.length).toBeGreaterThan(0);
      expect(res.body).not.toEqual(DELIVERED);
    });

    it('returns 400 listing the documented codes for code=500', async () => {
      const res = await prefer(form, 'GET', TRACK, { code: '500' });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('500 is not documented for trackOrder');
      expect(res.body.errors[0].message).toBe(`code must be one of: ${documented('/v1/order/tracking/{order_no}', 'get')}`);
    });
  });
});

describe('code=400 on each read: an example of what that read can get wrong', () => {
  const FEE = 'origin=317101&destination=327301&weight=1.5';
  it.each([
    ['an order detail', '/v1/order/512345678901', '/v1/order/12ab'],
    ['a tracking read', TRACK, '/v1/order/tracking/SBX%20NO'],
    ['an estimation', '/v1/rates/estimation?sender_addr_id=317101&receiver_addr_id=327301&item_weight=1.5', '/v1/rates/estimation'],
    ['a city list', '/v1/area/cities?province_id=31', '/v1/area/cities'],
    ['a district list', '/v1/area/districts?city_id=3171', '/v1/area/districts'],
    ['an area search', '/v1/area/search?q=jakarta', '/v1/area/search'],
    ['a shipping fee', `/v1/rates/shipping-fee?${FEE}`, '/v1/rates/shipping-fee'],
    ['a shipping fee stream', `/v1/rates/shipping-fee/stream?${FEE}`, '/v1/rates/shipping-fee/stream'],
  ])('names a field the real 400 of %s names, with its message', async (_, path, invalid) => {
    expect((await sandbox.call('GET', path)).status).not.toBe(400); // a valid request: the 400 is the preference's
    const example = await sandbox.call('GET', path, { headers: { Prefer: 'code=400' } });
    const real = await sandbox.call('GET', invalid);
    expect([example.status, real.status]).toEqual([400, 400]);
    expect(example.body.errors.length).toBeGreaterThan(0);
    for (const error of example.body.errors) expect(real.body.errors).toContainEqual(error);
  });

  it.each(['/v1/area/provinces', '/v1/couriers'])('names no field on %s, which takes no parameter', async (path) => {
    const example = await sandbox.call('GET', path, { headers: { Prefer: 'code=400' } });
    expect(example.status).toBe(400);
    expect(example.body).toMatchObject({ success: false, errors: [] });
  });
});

describe('Prefer, the finer points', () => {
  it("gives an example's photo link on the address asked, where the photo is served, and leaves the spec's example as it is", async () => {
    const asked = async (host: string) => (await sandbox.call('GET', TRACK, { headers: { Prefer: 'example=delivered', Host: host } })).body.history[0].pod_photo;
    expect(DELIVERED.history[0].pod_photo).toBe('http://127.0.0.1:4010/__sandbox/pod/SBXDLV00000001.png');
    expect(await asked('sandbox.test:5000')).toBe('http://sandbox.test:5000/__sandbox/pod/SBXDLV00000001.png');
    expect(await asked('other.test')).toBe('http://other.test/__sandbox/pod/SBXDLV00000001.png');
    const photo = await sandbox.call('GET', new URL(await asked('sandbox.test')).pathname, { token: '' });
    expect([photo.status, photo.headers['content-type']]).toEqual([200, 'image/png']);
  });

  it('combines code and example: code=404, example=notFound', async () => {
    const res = await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=404, example=notFound' } });
    expect(res.status).toBe(404);
    expect(res.headers['preference-applied']).toBe('code=404, example=notFound');
  });

  it('returns 400 listing the examples for an unknown example name', async () => {
    const res = await sandbox.call('GET', TRACK, { headers: { Prefer: 'example=lost' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'header.prefer', message: expect.stringContaining('delivered (200)') }]);
  });

  it.each([
    ['code=abc', 'header.prefer', { Prefer: 'code=abc' }, ''],
    ['dynamic=maybe', 'header.prefer', { Prefer: 'dynamic=maybe' }, ''],
    ['__code=4040', 'query.__code', {}, '?__code=4040'],
  ])('returns 400 naming the field for %s', async (_, field, headers, query) => {
    const res = await sandbox.call('GET', `${TRACK}${query}`, { headers });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe(field);
  });

  it.each([
    ['?__example=bogus with Prefer: dynamic=true', '?__example=bogus', { Prefer: 'dynamic=true' }, 'query.__example'],
    ['?__example=notFound with Prefer: code=200', '?__example=notFound', { Prefer: 'code=200' }, 'query.__example'],
    ['?__code=418 with Prefer: example=delivered', '?__code=418', { Prefer: 'example=delivered' }, 'query.__code'],
  ])('names the query parameter, not the header, for a bad %s (the header has other preferences)', async (_, query, headers, field) => {
    const res = await sandbox.call('GET', `${TRACK}${query}`, { headers });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('answers ?__code given twice with 400 saying it must be given once, as a control call says of its own parameters', async () => {
    const res = await sandbox.call('GET', `${TRACK}?__code=404&__code=500`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'query.__code', message: 'must be given once, as plain text' }]);
  });

  it('takes the first of a preference the header gives twice, as RFC 7240 says', async () => {
    const res = await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=404, code=400' } });
    expect(res.status).toBe(404);
    expect(res.headers['preference-applied']).toBe('code=404');
  });

  it('lets the header win over the query', async () => {
    const res = await sandbox.call('GET', `${TRACK}?__code=400`, { headers: { Prefer: 'code=404' } });
    expect(res.status).toBe(404);
  });

  it('still needs a valid token: tenancy holds', async () => {
    const res = await sandbox.call('GET', TRACK, { token: null, headers: { Prefer: 'code=200' } });
    expect(res.status).toBe(401);
  });

  it('still validates the request: an invalid create gets its real 400, not the preferred answer', async () => {
    const res = await sandbox.call('POST', '/v1/order', { body: { ...createRequest(1), sender_name: 5 }, headers: { Prefer: 'code=201' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'sender_name', message: expect.stringContaining('JSON string') }]);
  });

  it.each([
    ['an area the coverage data does not have', { ...createRequest(1), sender_addr_id: '999999' }, {}, 400, 'sender_addr_id'],
    ["a service its courier does not offer", createRequest(1, { items: [{ ...createRequest(1).items[0]!, service_code: '9' }] }), {}, 400, 'items[0].service_code'],
    ['an unknown scenario', createRequest(1), { 'X-Sandbox-Scenario': 'nope' }, 400, 'header.x-sandbox-scenario'],
    ['an unknown webhook chaos', createRequest(1), { 'X-Sandbox-Webhook-Chaos': 'nope' }, 400, 'header.x-sandbox-webhook-chaos'],
  ])("makes the operation's own checks too: a create with %s gets its real refusal, not the preferred 201, and stores nothing", async (_, body, headers, status, field) => {
    const res = await sandbox.call('POST', '/v1/order', { body, headers: { ...headers, Prefer: 'code=201' } });
    expect(res.status).toBe(status);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    expect(res.headers['preference-applied']).toBeUndefined();
    expect(await orderCount()).toBe(0);
  });

  it('refuses a create with a courier the client may not use with its 403, not the preferred 201', async () => {
    await sandbox.close();
    sandbox = await testSandbox({ clients: [{ token: 'only-sicepat', id: 'client-a', couriers: ['sicepat'] }] });
    const res = await sandbox.call('POST', '/v1/order', { token: 'only-sicepat', body: createRequest(1), headers: { Prefer: 'code=201' } });
    expect(res.status).toBe(403);
    expect(res.body.errors).toEqual([{ field: 'courier_code', message: expect.any(String) }]);
  });

  it.each([
    ['/v1/rates/shipping-fee?origin=999999&destination=327301&weight=1', 'origin'],
    ['/v1/rates/estimation?sender_addr_id=317401&receiver_addr_id=999999&item_weight=1', 'receiver_addr_id'],
  ])('makes the rates\' own checks too: %s with __code=200 is refused naming %s', async (path, field) => {
    const res = await sandbox.call('GET', `${path}&__code=200`);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('consumes no order numbers: the next real create gets what it would have got', async () => {
    await sandbox.call('POST', '/v1/order', { body: createRequest(3), headers: { Prefer: 'code=201' } });
    const after = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const fresh = await testSandbox();
    const expected = await fresh.call('POST', '/v1/order', { body: createRequest(1) });
    await fresh.close();
    expect(after.body.order_numbers).toEqual(expected.body.order_numbers);
    expect(after.body.batch_id).toBe(expected.body.batch_id);
  });
});

describe("Prefer under limits other than the defaults: the sandbox's own answers name the limits configured, as its real answers do", () => {
  /** This test's sandbox, with these options instead of the defaults (afterEach closes it). */
  const limited = async (options: Parameters<typeof testSandbox>[0]) => {
    await sandbox.close();
    sandbox = await testSandbox(options);
  };

  it('answers code=413 as a body above --body-limit is answered, on a create and on a read, and serves that example', async () => {
    await limited({ bodyLimit: '2kb' });
    const real = await sandbox.call('POST', '/v1/order', { body: createRequest(10) });
    expect(real.status).toBe(413);
    for (const preferred of [await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { Prefer: 'code=413' } }), await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=413' } })]) {
      expect([preferred.status, preferred.body]).toEqual([413, real.body]);
    }
    const served = (await sandbox.call('GET', '/__sandbox/openapi.json')).body.components.responses.PayloadTooLarge.content['application/json'].examples.tooLarge.value;
    expect(served).toEqual(real.body);
  });

  it('answers code=429 as a client past --rate-limit is answered: the same message, errors and Retry-After', async () => {
    await limited({ rateLimit: 2 });
    const preferred = await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=429' } });
    // The real one from a sandbox of the same limits whose allowance is whole (the preferred answer may outlast a second: Prism loads on first use).
    await limited({ rateLimit: 2 });
    await sandbox.call('GET', TRACK);
    await sandbox.call('GET', TRACK);
    const real = await sandbox.call('GET', TRACK);
    expect(real.status).toBe(429);
    expect([preferred.status, preferred.body, preferred.headers['retry-after']]).toEqual([429, real.body, real.headers['retry-after']]);
  });

  it('answers code=429 without --rate-limit as a client with too many requests waiting is, the 429 it can then meet', async () => {
    const res = await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=429' } });
    expect([res.status, res.body.errors]).toEqual([429, []]);
    expect(res.body.message).toMatch(/^This client has as many requests waiting for their turn as it may have \(at most 1000, with 32 MiB of bodies together;/);
  });

  // The 503 a read can meet on this store: a database away on PostgreSQL; on the embedded store (which reads from memory), a stop under way.
  it('serves on PostgreSQL, as the example code=503 answers, a read that cannot reach the database', () => {
    const served = withSandboxAnswers(parse(readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8')), resolveOptions({ databaseUrl: 'postgres://sandbox@db/sandbox' }));
    expect((served as any).components.responses.DatabaseUnavailable.content['application/json'].examples).toEqual({
      databaseUnreachable: { value: { success: false, message: 'The sandbox cannot read from its database right now (ECONNREFUSED). Retry shortly.', errors: [] } },
    });
  });

  it.skipIf(onPostgres)('answers code=503 on a read as a stopping sandbox answers, not with a database the embedded store does not have', async () => {
    const res = await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=503' } });
    expect([res.status, res.body]).toEqual([
      503,
      { success: false, message: 'The sandbox is stopping (SIGTERM or SIGINT): it takes no new requests. Retry: behind a proxy another replica answers; else once it has started again.', errors: [] },
    ]);
  });

  it('answers code=431 naming --max-header-size', async () => {
    await limited({ maxHeaderSize: 2048 });
    const res = await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=431' } });
    expect([res.status, res.body]).toEqual([
      431,
      { success: false, message: 'The request headers are larger than the limit of 2048 bytes; send shorter headers (or start the sandbox with a larger --max-header-size).', errors: [{ field: 'header', message: 'too large' }] },
    ]);
  });
});

describe('generated data and --seed', () => {
  // One Host for every call: a generated POD scan's photo address is on the address asked (supertest's port changes per call).
  const dynamic = (s: TestSandbox, prefer = 'dynamic=true') => s.call('GET', TRACK, { headers: { Prefer: prefer, Host: 'sandbox.test' } }).then((r) => r.body);

  it('gives the same data for the same request under the same seed, across sandboxes', async () => {
    const first = await dynamic(sandbox);
    expect(await dynamic(sandbox)).toEqual(first);
    const twin = await testSandbox();
    expect(await dynamic(twin)).toEqual(first);
    await twin.close();
  });

  it('gives other data under another seed', async () => {
    const other = await testSandbox({ seed: 'another-seed' });
    expect(await dynamic(other)).not.toEqual(await dynamic(sandbox));
    await other.close();
  });

  it('names the seed in Preference-Applied where it seeded generated data, and only there', async () => {
    const seeded = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { Prefer: 'dynamic=true, seed=7' } });
    expect(seeded.headers['preference-applied']).toBe('dynamic=true, seed=7');
    const quoted = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { Prefer: 'dynamic=true, seed="run 7"' } });
    expect(quoted.headers['preference-applied']).toBe('dynamic=true, seed="run 7"');
    const tabbed = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { Prefer: 'dynamic=true, seed="a\tb"' } });
    expect(tabbed.headers['preference-applied']).toBe('dynamic=true, seed="a\tb"');
    const example = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { Prefer: 'code=404, seed=7' } });
    expect(example.headers['preference-applied']).toBe('code=404');
  });

  it('takes the seed as a parameter of dynamic too (dynamic=true; seed=7), as RFC 7240 writes one', async () => {
    const unseeded = await testSandbox({ seed: undefined });
    const asParameter = await unseeded.call('GET', TRACK, { headers: { Prefer: 'dynamic=true; seed=7', Host: 'sandbox.test' } });
    expect(asParameter.headers['preference-applied']).toBe('dynamic=true, seed=7');
    expect(asParameter.body).toEqual(await dynamic(unseeded, 'dynamic=true, seed=7'));
    expect(asParameter.body).not.toEqual(await dynamic(unseeded, 'dynamic=true, seed=8'));
    expect(await dynamic(unseeded, 'code=200; seed=7, dynamic=true')).toEqual(asParameter.body);
    await unseeded.close();
  });

  it('without --seed, a request seeded with Prefer seed= does not leave the generator seeded', async () => {
    const unseeded = await testSandbox({ seed: undefined });
    expect(await dynamic(unseeded, 'dynamic=true, seed=7')).toEqual(await dynamic(unseeded, 'dynamic=true, seed=7'));
    const [a, b] = [await dynamic(unseeded), await dynamic(unseeded)];
    expect(a).not.toEqual(b);
    await unseeded.close();
  });
});

describe('Prefer on an answer that is not JSON', () => {
  it('sends the documented event-stream example of GET /v1/rates/shipping-fee/stream as text', async () => {
    const res = await sandbox.call('GET', '/v1/rates/shipping-fee/stream?origin=317101&destination=327301&weight=1.5', { headers: { Prefer: 'code=200' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(res.text).toContain('event: done');
  });

  it('sends that example for dynamic=true too: generated text of a string schema is nothing the provider sends', async () => {
    const res = await sandbox.call('GET', '/v1/rates/shipping-fee/stream?origin=317101&destination=327301&weight=1.5', { headers: { Prefer: 'dynamic=true' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(res.text).toMatch(/^event: /);
    expect(res.text).toContain('event: done');
  });
});
