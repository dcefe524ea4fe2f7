import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { TOKEN_A, testSandbox, type TestSandbox } from '../support/sandbox.js';
import { createOne } from './orders.js';

let sandbox: TestSandbox;
beforeEach(async () => (sandbox = await testSandbox()));
afterEach(() => sandbox.close());

/** The provider documents exact paths: a client with a wrong one must not pass in the sandbox. */
describe('provider paths match exactly as documented', () => {
  it.each([
    ['POST', '/V1/ORDER', '/v1/order'],
    ['POST', '/v1/order/', '/v1/order'],
    ['POST', '/v1/Order', '/v1/order'],
  ])('%s %s is a 404 naming %s, and creates nothing', async (method, path, documented) => {
    const res = await sandbox.call(method, path, { body: createRequest(1) });
    expect(res.status).toBe(404);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toBe(
      `No operation ${method} ${path}: the provider's path is ${documented}. Paths match exactly as the provider documents them (letter case, no trailing slash).`,
    );
    const listed = await sandbox.call('GET', '/__sandbox/orders');
    expect(listed.body.total).toBe(0);
  });

  it('names the documented path with the request\'s own parameter values', async () => {
    const orderNo = await createOne(sandbox);
    const res = await sandbox.call('GET', `/V1/order/${orderNo}/`);
    expect(res.status).toBe(404);
    expect(res.body.message).toContain(`the provider's path is /v1/order/${orderNo}.`);
    const tracking = await sandbox.call('GET', '/v1/ORDER/tracking/JN0000000001');
    expect(tracking.body.message).toContain("the provider's path is /v1/order/tracking/JN0000000001.");
  });

  it.each([
    ['/v1/order/tracking/', '/v1/order/tracking/{order_no}, and its order_no is missing'],
    ['/v1/order/', '/v1/order/{order_no}, and its order_no is missing'],
  ])('says the value is missing from GET %s (an empty AWB or order number), not a path of another operation', async (path, said) => {
    const res = await sandbox.call('GET', path);
    expect(res.status).toBe(404);
    expect(res.body.message).toBe(`No operation GET ${path}: the provider's path is ${said}.`);
  });

  it.each([
    ['/v1/order/tracking', '/v1/order/tracking/{order_no}, and its order_no is missing'],
    ['/V1/Order/Tracking', '/v1/order/tracking/{order_no}, and its order_no is missing. Paths match exactly as the provider documents them (letter case, no trailing slash)'],
  ])('says the AWB is missing from GET %s, which the order detail\'s {order_no} would otherwise take as an order number', async (path, said) => {
    const res = await sandbox.call('GET', path);
    expect([res.status, res.body.message]).toEqual([404, `No operation GET ${path}: the provider's path is ${said}.`]);
    // HEAD is answered as GET is (the envelope checks of call() do not apply to its empty body).
    expect((await supertest(sandbox.app).head(path).set('Authorization', `Bearer ${TOKEN_A}`)).status).toBe(404);
  });

  it.each([
    ['POST', '/V1/Order/Tracking', ' Paths match exactly as the provider documents them (letter case, no trailing slash).'],
    ['DELETE', '/V1/Order/Tracking', ' Paths match exactly as the provider documents them (letter case, no trailing slash).'],
    // The detail's own path, up to a value it cannot take: tracking's in another case, not the detail's 405.
    ['POST', '/v1/order/Tracking', ' Paths match exactly as the provider documents them (letter case, no trailing slash).'],
    ['GET', '/v1/order/Tracking', ' Paths match exactly as the provider documents them (letter case, no trailing slash).'],
    ['POST', '/v1/order/tracking', ''],
    ['DELETE', '/v1/order/tracking', ''],
  ])('names tracking, not an order numbered "Tracking", to %s %s (not a 405 whose GET would be that 404)', async (method, path, caseNote) => {
    const res = await sandbox.call(method, path, { body: createRequest(1) });
    expect([res.status, res.body.message]).toEqual([404, `No operation ${method} ${path}: the provider's path is /v1/order/tracking/{order_no}, and its order_no is missing.${caseNote}`]);
  });

  it.each(['GET', 'POST'])('tells %s /v1/Order the letter case of /v1/order, whatever else it misses', async (method) => {
    const res = await sandbox.call(method, '/v1/Order', { body: createRequest(1) });
    expect(res.status).toBe(404);
    expect(res.body.message).toContain('/v1/order');
    expect(res.body.message).toMatch(/Paths match exactly as the provider documents them \(letter case, no trailing slash\)\.$/);
  });

  it.each([
    ['GET', '/V1/Order/Cancel'],
    ['POST', '/V1/Order/Cancel'],
    // The detail's path up to its order number, with a value it cannot take: not a 405 whose GET would be the detail's 400.
    ['POST', '/v1/order/Cancel'],
    ['GET', '/v1/order/Cancel'],
    ['POST', '/v1/order/CANCEL'],
  ])('names /v1/order/cancel, not an order numbered "Cancel", to %s %s', async (method, path) => {
    const res = await sandbox.call(method, path, { body: { order_no: '1' } });
    expect([res.status, res.body.message]).toEqual([404, `No operation ${method} ${path}: the provider's path is /v1/order/cancel. Paths match exactly as the provider documents them (letter case, no trailing slash).`]);
  });

  it.each(['DELETE', 'PUT'])('names /v1/order, not a missing order number, to %s /V1/ORDER', async (method) => {
    const res = await sandbox.call(method, '/V1/ORDER', { body: createRequest(1) });
    expect([res.status, res.body.message]).toEqual([404, `No operation ${method} /V1/ORDER: the provider's path is /v1/order. Paths match exactly as the provider documents them (letter case, no trailing slash).`]);
  });

  it('leaves the neighbours of GET /v1/order/tracking as they were', async () => {
    // A path of its own is still its own (405 naming its method); a value that is no stem is still the detail's to judge.
    const create = await sandbox.call('GET', '/v1/order');
    expect([create.status, create.body.message]).toEqual([405, 'Method GET is not allowed here; use POST.']);
    const detail = await sandbox.call('GET', '/v1/order/abc');
    expect([detail.status, detail.body.errors]).toEqual([400, [{ field: 'order_no', message: 'must be numeric text, digits only (for example "12")' }]]);
    expect((await sandbox.call('GET', '/v1/order/123')).status).toBe(404);
    // A method the detail does not serve, on a value it could take or no stem: still its 405.
    for (const path of ['/v1/order/123', '/v1/order/abc']) expect((await sandbox.call('DELETE', path)).status).toBe(405);
    // An empty segment after the AWB's place is no path of the provider at all.
    const doubled = await sandbox.call('GET', '/v1/order/tracking//');
    expect([doubled.status, doubled.body.message]).toEqual([404, 'No operation GET /v1/order/tracking//. See GET /__sandbox/openapi.json for the paths this sandbox serves.']);
  });

  it('checks the token before a path value that is not valid percent-encoding, and journals the 400 with its client', async () => {
    expect((await sandbox.call('GET', '/v1/order/tracking/%E0%A4%A', { token: null })).status).toBe(401);
    const res = await sandbox.call('GET', '/v1/order/tracking/%E0%A4%A');
    expect([res.status, res.body.errors]).toEqual([400, [{ field: 'order_no', message: 'is not valid percent-encoded text' }]]);
    const journal = await sandbox.call('GET', '/__sandbox/requests');
    expect(journal.body.requests.map((r: { path: string; status: number }) => [r.path, r.status])).toContainEqual(['/v1/order/tracking/%E0%A4%A', 400]);
  });

  it('serves the exact paths as before', async () => {
    const orderNo = await createOne(sandbox);
    expect((await sandbox.call('GET', `/v1/order/${orderNo}`)).status).toBe(200);
  });

  it('answers a path unlike any documented one as before', async () => {
    const res = await sandbox.call('GET', '/v2/orders');
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('No operation GET /v2/orders. See GET /__sandbox/openapi.json for the paths this sandbox serves.');
    // The root, where someone who only has the URL looks first, points to the manual too.
    const root = await sandbox.call('GET', '/');
    expect(root.status).toBe(404);
    expect(root.body.message).toBe('No operation GET /. See GET /__sandbox/openapi.json for the paths this sandbox serves, /docs for its manual and /dashboard for its dashboard.');
    const control = await sandbox.call('GET', '/__sandbox/nothing');
    expect(control.status).toBe(404);
    expect(control.body.message).toBe('No operation GET /__sandbox/nothing. See GET /__sandbox/control.openapi.json for the paths of the control API.');
    // The rest of a control path may be in any case; its prefix may not, and the 404 says so.
    const shouted = await sandbox.call('GET', '/__SANDBOX/health');
    expect([shouted.status, shouted.body.message]).toEqual([404, 'No operation GET /__SANDBOX/health. Control paths begin with /__sandbox in lower case (the rest of the path may be in any case). See GET /__sandbox/control.openapi.json for the paths of the control API.']);
  });
});
