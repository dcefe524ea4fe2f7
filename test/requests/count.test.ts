import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest, item } from '../support/orders.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

const count = async (match: unknown, token = TOKEN_A) => {
  const res = await sandbox.call('POST', '/__sandbox/requests/count', { body: match, token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.count as number;
};

/** Client A: three creates (two by sicepat, one rejected for a bad weight) and two trackings; client B: one create and one tracking. */
async function knownRequests(): Promise<void> {
  expect((await sandbox.call('POST', '/v1/order', { body: createRequest(1, { courier_code: 'sicepat' }) })).status).toBe(201);
  expect((await sandbox.call('POST', '/v1/order', { body: createRequest(2, { courier_code: 'sicepat' }) })).status).toBe(201);
  expect((await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [item({ item_weight: 'heavy' })] }) })).status).toBe(400);
  expect((await sandbox.call('GET', '/v1/order/tracking/SBXNOSUCH01')).status).toBe(404);
  expect((await sandbox.call('GET', '/v1/order/tracking/SBXNOSUCH02')).status).toBe(404);
  expect((await sandbox.call('POST', '/v1/order', { body: createRequest(1, { courier_code: 'sicepat' }), token: TOKEN_B })).status).toBe(201);
  expect((await sandbox.call('GET', '/v1/order/tracking/SBXNOSUCH01', { token: TOKEN_B })).status).toBe(404);
}

describe('POST /__sandbox/requests/count', () => {
  it.each([
    ['nothing (every request)', {}, 5, 2],
    ['a method', { method: 'post' }, 3, 1],
    ['a path', { path: '/v1/order' }, 3, 1],
    ['a path glob', { path: '/v1/order/tracking/*' }, 2, 1],
    ['a glob across segments', { path: '/v1/**' }, 5, 2],
    ['an operation', { operation_id: 'trackOrder' }, 2, 1],
    ['a status', { status: 201 }, 2, 1],
    ['a status and a path', { status: 400, path: '/v1/order' }, 1, 0],
    ['a body field', { body: { courier_code: 'sicepat' } }, 2, 1],
    ['a nested body field', { body: { 'items[1].order_code': 'INV-2' } }, 1, 0],
    ['a body field and a status no request had together', { body: { courier_code: 'sicepat' }, status: 400 }, 0, 0],
    ['an exact path no request took', { path: '/v1/order/tracking/SBXNOSUCH02' }, 1, 0],
  ])('counts exactly the requests matching %s, each client only its own', async (_, match, forA, forB) => {
    await knownRequests();
    expect(await count(match)).toBe(forA);
    expect(await count(match, TOKEN_B)).toBe(forB);
  });

  it("counts the requests refused for a path parameter that breaks its pattern: they are journaled, as a fault rule's match of them is not", async () => {
    expect((await sandbox.call('GET', '/v1/order/abc')).status).toBe(400);
    expect(await count({ path: '/v1/order/abc' })).toBe(1);
    const rule = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path: '/v1/order/abc' }, action: { type: 'status', status: 503 } } });
    expect(rule.status).toBe(400);
    expect(rule.body.errors).toEqual([expect.objectContaining({ field: 'match.path' })]);
  });

  it('counts a request straight after it was answered (read your own writes)', async () => {
    for (let i = 1; i <= 3; i++) {
      await sandbox.call('GET', '/v1/order/tracking/SBXNOSUCH01');
      expect(await count({ operation_id: 'trackOrder' })).toBe(i);
    }
  });

  it('counts nothing of a client whose journal was cleared, and the other client keeps its count', async () => {
    await knownRequests();
    await sandbox.call('DELETE', '/__sandbox/requests');
    expect(await count({})).toBe(0);
    expect(await count({}, TOKEN_B)).toBe(2);
  });

  it.each([
    ['an unknown criterion', { url: '/v1/order' }, 'url'],
    ['a path glob not starting with /', { path: 'v1/order' }, 'path'],
    ['a path glob beyond ASCII', { path: '/v1/ordér' }, 'path'],
    ['a body key that is not a field path', { body: { 'items[': 1 } }, 'body.items['],
    ['a status that is not one', { status: 42 }, 'status'],
    // No entry could have it: a count of 0 would read as "the client never sent it".
    ['an operationId in the wrong letter case', { operation_id: 'createorder' }, 'operation_id'],
    ['a path no operation of the spec has (the journal keeps none)', { path: '/v1/orders' }, 'path'],
    ['a method no operation takes', { method: 'DELETE' }, 'method'],
    ['more than 32 body criteria', { body: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`items[0].f${i}`, 'x'])) }, 'body'],
    ['a __proto__ header (node leaves it out of the headers it reads)', { headers: JSON.parse('{"__proto__":"x"}') }, 'headers.__proto__'],
    ['more than 32 header criteria', { headers: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x-h${i}`, 'x'])) }, 'headers'],
  ])('answers 400 naming the field for %s', async (_, match, field) => {
    await knownRequests();
    const res = await sandbox.call('POST', '/__sandbox/requests/count', { body: match });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContainEqual(expect.stringContaining(field));
    // Nothing was added to the journal by the count, nor changed.
    expect(await count({})).toBe(5);
  });

  it('says of a match whose body is no object that its field body must be one, not that the request body is not an object', async () => {
    const res = await sandbox.call('POST', '/__sandbox/requests/count', { body: { body: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: 'The request is not valid; see errors.', errors: [{ field: 'body', message: 'must be a JSON object' }] });
    // A body that is itself no object is told so.
    const list = await sandbox.call('POST', '/__sandbox/requests/count', { body: ['x'] });
    expect(list.body.message).toBe('The body is valid JSON but not an object: send the fields in {...}.');
  });

  it('answers 400 to a listing filtered by an operationId the spec does not have, naming the query parameter as the other listings do', async () => {
    await knownRequests();
    const res = await sandbox.call('GET', '/__sandbox/requests?operation_id=createorder');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'operation_id', message: expect.stringMatching(/letter case counts: createOrder/) }]);
    expect((await sandbox.call('GET', '/__sandbox/requests?operation_id=createOrder')).status).toBe(200);
  });

  it("is a read: a read_only token counts its client's requests, and the count changes nothing", async () => {
    const shared = await testSandbox({ clients: [{ token: 'partner-a', id: 'client-a' }, { token: 'ro', id: 'client-a', role: 'read_only' }, { token: 'partner-b', id: 'client-b' }] });
    try {
      await shared.call('GET', '/v1/couriers', { token: 'partner-a' });
      await shared.call('GET', '/v1/couriers', { token: 'partner-b' });
      const asked = { body: { operation_id: 'listCouriers' }, token: 'ro' };
      expect(await shared.call('POST', '/__sandbox/requests/count', asked)).toMatchObject({ status: 200, body: { count: 1 } });
      expect((await shared.call('POST', '/__sandbox/requests/count', asked)).body).toEqual({ count: 1 });
      expect((await shared.call('GET', '/__sandbox/requests', { token: 'partner-a' })).body.total).toBe(1);
    } finally {
      await shared.close();
    }
  });
});
