import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSandbox, TOKEN_A, type TestSandbox } from '../support/sandbox.js';

const READER_A = 'token-reader-a';
let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: READER_A, id: 'client-a', role: 'read_only' }] });
});
afterEach(() => sandbox.close());

const post = (body: string, token = TOKEN_A) =>
  request(sandbox.app).post('/v1/order').set('authorization', `Bearer ${token}`).set('content-type', 'application/json').send(body);

describe('a JSON body is parsed in its client turn, after the token and the role are checked', () => {
  it('answers a body that is not JSON with a 400 naming body, and the journal keeps that request', async () => {
    const res = await post('{"items": [');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, errors: [{ field: 'body', message: 'is not valid JSON' }] });
    const journal = (await sandbox.call('GET', '/__sandbox/requests')).body;
    expect(journal.requests).toEqual([expect.objectContaining({ method: 'POST', path: '/v1/order', status: 400, body: null })]);
  });

  it('takes a body that begins with a UTF-8 byte order mark, as before', async () => {
    const res = await request(sandbox.app).put('/__sandbox/webhook').set('authorization', `Bearer ${TOKEN_A}`).set('content-type', 'application/json').send(`\uFEFF${JSON.stringify({ url: 'http://127.0.0.1:9/hooks' })}`);
    expect(res.status).toBe(200);
    expect(res.body.url).toBe('http://127.0.0.1:9/hooks');
  });

  it('answers a JSON text that is not an object (a list among them) as valid JSON that is not an object, naming body', async () => {
    for (const text of ['"a string"', '42', 'null', ' true', '[]', '[{"order_no":"x"}]']) {
      expect((await post(text)).body).toEqual({ success: false, message: 'The body is valid JSON but not an object: send the fields in {...}.', errors: [{ field: 'body', message: 'must be a JSON object' }] });
    }
    expect((await post('nul')).body.errors).toEqual([{ field: 'body', message: 'is not valid JSON' }]);
  });

  it('answers a body nested deeper than 64 levels with a 400 naming body, without parsing it', async () => {
    const res = await post(`${'['.repeat(70)}${']'.repeat(70)}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'is nested deeper than 64 levels' }]);
  });

  it("refuses a read_only token's create with 403, whatever its body says: the role is checked before the body is read", async () => {
    expect((await post(JSON.stringify({ items: [] }), READER_A)).status).toBe(403);
    const malformed = await post('{"items": [', READER_A);
    expect(malformed.status).toBe(403);
    expect(malformed.body.message).toMatch(/read-only/);
  });
});
