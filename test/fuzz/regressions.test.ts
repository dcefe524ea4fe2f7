import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';
import { deepJson } from './values.js';

// Cases the fuzzer found, kept so they stay fixed.
let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

describe('a deeply nested JSON body (found by the fuzzer: the journal listing overflowed JSON.stringify, a 500)', () => {
  it.each([
    ['POST', '/v1/order'],
    ['POST', '/__sandbox/faults'],
  ])('%s %s answers 400 naming body, and the request journal still lists', async (method, path) => {
    const text = `{"nested":${deepJson(20_000, 'array')}}`;
    const res = await sandbox.call(method, path, { body: text, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'is nested deeper than 64 levels' }]);
    const journal = await sandbox.call('GET', '/__sandbox/requests');
    expect(journal.status).toBe(200);
  });

  it('still takes the create request, which nests 3 deep', async () => {
    expect((await sandbox.call('POST', '/v1/order', { body: createRequest(2) })).status).toBe(201);
  });

  it('refuses 100,000 levels of objects with the same 400, without a stack overflow', async () => {
    const res = await sandbox.call('POST', '/v1/order', { body: deepJson(100_000, 'object'), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'is nested deeper than 64 levels' }]);
  });
});
