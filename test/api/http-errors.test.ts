import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import zlib from 'node:zlib';
import supertest from 'supertest';
import { createSandbox } from '../../src/app/sandbox.js';
import { answerClientErrors } from '../../src/http/client-error.js';
import { createRequest } from '../support/orders.js';
import { expectMatchesSpec, testSandbox, TOKEN_A, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox({ bodyLimit: '10kb' });
});
afterEach(() => sandbox.close());

const auth = { Authorization: `Bearer ${TOKEN_A}` };

describe('answers that are not about one operation', () => {
  it('answers an unknown path with a 404 envelope', async () => {
    const res = await sandbox.call('GET', '/v1/unknown/thing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toEqual({ success: false, message: expect.stringContaining('No operation GET /v1/unknown/thing'), errors: [] });
  });

  it('answers a wrong method with 405, an Allow header and the envelope', async () => {
    const res = await sandbox.call('DELETE', '/v1/order');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.success).toBe(false);
  });

  it('answers malformed JSON with a 400 envelope naming the body', async () => {
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').send('{"sender_name": "x",');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: expect.stringContaining('not valid JSON'), errors: [{ field: 'body', message: 'is not valid JSON' }] });
  });

  it('answers a number too large to hold (1e400, read as Infinity) with a 400 naming its field, and stores nothing', async () => {
    const text = JSON.stringify(createRequest(2)).replace('"input_type":1', '"input_type":1e400').replace(/"cod":"0"/, '"cod":"0","extra":[1,-2e999]');
    expect(text).toContain('1e400');
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').send(text);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'input_type', message: 'is a number too large to hold (at most about 1.8e308)' }]);
    const nested = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').send(JSON.stringify(createRequest(2)).replace(/"cod":"0"/, '"cod":"0","extra":[1,-2e999]'));
    expect(nested.body.errors).toEqual([{ field: 'items[0].extra[1]', message: expect.stringMatching(/too large/) }]);
    // A fault rule's body criterion too; a small number written with a long exponent (1e-400 is 0) is taken.
    const rule = await sandbox.call('POST', '/__sandbox/faults', { body: '{"match":{"body":{"input_type":1E+400}},"action":{"type":"status","status":503}}', headers: { 'content-type': 'application/json' } });
    expect(rule.body.errors).toEqual([{ field: 'match.body.input_type', message: expect.stringMatching(/too large/) }]);
    // 400 digits in a row are a number too large too; runs of 308 digits in a string are text.
    const digits = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').send(JSON.stringify(createRequest(1)).replace('"input_type":1', `"input_type":${'9'.repeat(400)}`));
    expect(digits.body.errors).toEqual([{ field: 'input_type', message: expect.stringMatching(/too large/) }]);
    const runs = await supertest(sandbox.app).post('/__sandbox/clock/advance').set(auth).set('Content-Type', 'application/json').send(JSON.stringify({ ms: 0, note: Array(20).fill('1'.repeat(308)).join(' ') }));
    expect(runs.body, JSON.stringify(runs.body)).toMatchObject({ errors: [{ field: 'note', message: 'is not a known field' }] });
    const tiny = JSON.stringify(createRequest(1)).replace('"input_type":1', '"input_type":1,"tiny":1e-400');
    expect((await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').send(tiny)).status).toBe(201);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(1);
  });

  it('answers text holding half of a surrogate pair alone (\\ud800) with a 400 naming its field, and stores nothing; whole pairs and characters are taken', async () => {
    const send = (text: string) => supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').send(text);
    const lone = await send(JSON.stringify(createRequest(2)).replace('"sender_name":"', '"sender_name":"A\\ud800B'));
    expect(lone.status).toBe(400);
    expect(lone.body).toEqual({ success: false, message: expect.stringContaining('not valid Unicode'), errors: [{ field: 'sender_name', message: 'is not well-formed Unicode text (a lone surrogate)' }] });
    const second = await send(JSON.stringify(createRequest(2)).replace(/"order_code":"([^"]*)"/, '"order_code":"$1\\ude9a"'));
    expect(second.body.errors).toEqual([{ field: 'items[0].order_code', message: expect.stringMatching(/lone surrogate/) }]);
    const inKey = await send(JSON.stringify(createRequest(1)).replace('"sender_name":', '"x\\udbff":1,"sender_name":'));
    expect(inKey.body.errors).toEqual([{ field: 'x\udbff', message: expect.stringMatching(/lone surrogate/) }]);
    // A control body too (a run's name).
    const run = await sandbox.call('POST', '/__sandbox/runs', { body: '{"name":"\\ud800"}', headers: { 'content-type': 'application/json' } });
    expect([run.status, run.body.errors]).toEqual([400, [{ field: 'name', message: expect.stringMatching(/lone surrogate/) }]]);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(0);
    // A pair, escaped or not, and a backslash before "ud800" are text.
    const pair = await send(JSON.stringify(createRequest(1)).replace('"sender_name":"', '"sender_name":"\\ud83d\\ude9a 🚚 \\\\ud800 '));
    expect(pair.status, JSON.stringify(pair.body)).toBe(201);
    expect(JSON.stringify((await sandbox.call('GET', `/__sandbox/orders/${pair.body.order_numbers[0]}`)).body)).toContain('"sender_name":"🚚 🚚 \\\\ud800 ');
  });

  it('answers a body sent without a token of this sandbox with 401 before reading it: malformed JSON is not even looked at', async () => {
    for (const token of [null, 'no-such-token']) {
      const res = await sandbox.call('POST', '/v1/order', { token, body: '{not json', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(401);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'header.authorization' })]);
    }
    expect((await sandbox.call('POST', '/v1/order', { body: '{not json', headers: { 'content-type': 'application/json' } })).status).toBe(400);
  });

  it.each(['gzip', 'deflate', 'br'])('answers a body that is not the %s data its Content-Encoding says with 400 naming body', async (encoding) => {
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').set('Content-Encoding', encoding).send('not compressed');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: expect.stringContaining(`Content-Encoding (${encoding})`), errors: [{ field: 'body', message: `is not valid ${encoding} data` }] });
  });

  it.each([
    ['a lone byte 0xff in a value', Buffer.concat([Buffer.from('{"sender_name":"Toko '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])],
    ['a cut multi-byte character in a key', Buffer.concat([Buffer.from('{"'), Buffer.from([0xc3]), Buffer.from('":1}')])],
  ])('answers a body with %s (not UTF-8) with 400 naming body, and stores nothing', async (_, bytes) => {
    // superagent would send a Buffer under a JSON content type as JSON of its own: the bytes go as they are.
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json; charset=utf-8').serialize((raw: Buffer) => raw as unknown as string).send(bytes);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: expect.stringContaining('not valid UTF-8'), errors: [{ field: 'body', message: 'is not valid UTF-8' }] });
    expectMatchesSpec(sandbox.services, 'POST', '/v1/order', res);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(0);
    const journal = await sandbox.call('GET', '/__sandbox/requests?limit=1');
    expect(journal.body.requests[0]).toMatchObject({ status: 400, body: null, violations: [{ field: 'body', message: 'is not valid UTF-8' }] });
  });

  it('answers a body that is not JSON with 415', async () => {
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'text/plain').send('sender_name=x');
    expect(res.status).toBe(415);
    expect(res.body.message).toContain('application/json');
    expect(res.body.errors).toEqual([{ field: 'header.content-type', message: 'must be application/json' }]);
    expectMatchesSpec(sandbox.services, 'POST', '/v1/order', res);
  });

  it('takes a +json media type (application/vnd.api+json) as JSON, as the errors reference says', async () => {
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/vnd.api+json').send(JSON.stringify(createRequest(1)));
    expect(res.status).toBe(201);
  });

  it('answers a form-encoded body with 415', async () => {
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).type('form').send({ a: '1' });
    expect(res.status).toBe(415);
  });

  it.each(['compress', 'gzip, gzip', 'zstd', 'ZSTD'])('answers a body with Content-Encoding %s with 415 naming that header', async (encoding) => {
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').set('Content-Encoding', encoding).send('{}');
    expect(res.status).toBe(415);
    expect(res.body.message).toContain(`"${encoding}"`);
    expect(res.body.errors).toEqual([{ field: 'header.content-encoding', message: 'must be gzip, deflate, br or identity' }]);
    expectMatchesSpec(sandbox.services, 'POST', '/v1/order', res);
  });

  it('serves a GET without a body whatever Content-Encoding it names, as before', async () => {
    const res = await supertest(sandbox.app).get('/__sandbox/orders').set(auth).set('Content-Type', 'application/json').set('Content-Encoding', 'zstd');
    expect(res.status).toBe(200);
  });

  it('on a GET, refuses a body in another charset (415) and otherwise does not read it: text or broken JSON is served as the GET it is', async () => {
    const latin1 = await supertest(sandbox.app).get('/__sandbox/orders').set(auth).set('Content-Type', 'application/json; charset=latin1').send('{}');
    expect(latin1.status).toBe(415);
    expect(latin1.body.errors).toEqual([{ field: 'header.content-type', message: 'charset must be utf-8' }]);
    for (const [type, body] of [['text/plain', 'hello'], ['application/json', '{bad']]) {
      expect((await supertest(sandbox.app).get('/__sandbox/orders').set(auth).set('Content-Type', type!).send(body)).status).toBe(200);
    }
  });

  // Node's zlib decodes zstd from Node 24 on, and body-parser with it: the encodings taken must not change with the Node a sandbox runs on.
  it.runIf(typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync === 'function')('answers a well-formed zstd body with 415 too, as on a Node without zstd, and stores nothing', async () => {
    const zstd = (zlib as unknown as { zstdCompressSync: (input: Buffer) => Buffer }).zstdCompressSync(Buffer.from(JSON.stringify(createRequest(1))));
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').set('Content-Encoding', 'zstd').send(zstd);
    expect(res.status).toBe(415);
    expect(res.body.errors).toEqual([{ field: 'header.content-encoding', message: 'must be gzip, deflate, br or identity' }]);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(0);
  });

  it('answers a body over the limit with 413', async () => {
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(60) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, message: expect.stringContaining('10kb'), errors: [{ field: 'body', message: 'must be at most 10kb' }] });
  });

  it('journals a body it could not read as the operation it was sent to: a client sees its bad gzip, its UTF-16 or its oversized body in its journal', async () => {
    const post = () => supertest(sandbox.app).post('/v1/order').set(auth);
    expect((await post().set('Content-Type', 'application/json').set('Content-Encoding', 'gzip').send('not compressed')).status).toBe(400);
    expect((await post().set('Content-Type', 'application/json; charset=utf-16le').send(Buffer.from('{}', 'utf16le'))).status).toBe(415);
    expect((await post().set('Content-Type', 'application/json').set('Content-Encoding', 'compress').send('{}')).status).toBe(415);
    expect((await post().set('Content-Type', 'application/json').send(JSON.stringify(createRequest(60)))).status).toBe(413);
    const journal = await sandbox.call('GET', '/__sandbox/requests');
    expect(journal.body.requests.map((r: { operation_id: string; status: number; body: unknown }) => [r.operation_id, r.status, r.body])).toEqual([
      ['createOrder', 400, null],
      ['createOrder', 415, null],
      ['createOrder', 415, null],
      ['createOrder', 413, null],
    ]);
    expect(journal.body.requests[0].violations).toEqual([{ field: 'body', message: 'is not valid gzip data' }]);
    expect((await sandbox.call('POST', '/__sandbox/requests/count', { body: { operation_id: 'createOrder', status: 415 } })).body).toEqual({ count: 2 });
    // A GET's body is read as well, and refused the same way.
    const read = await supertest(sandbox.app).get('/v1/order/tracking/SBX0000000001').set(auth).set('Content-Type', 'application/json').set('Content-Encoding', 'br').send('not compressed');
    expect(read.status).toBe(400);
    expect(read.body.errors).toEqual([{ field: 'body', message: 'is not valid br data' }]);
  });

  it('answers a path no operation serves with its 404, whatever its body', async () => {
    const res = await supertest(sandbox.app).post('/v1/orders').set(auth).set('Content-Type', 'application/json').set('Content-Encoding', 'gzip').send('not compressed');
    expect(res.status).toBe(404);
    expect(res.body.message).toContain('/v1/orders');
  });

  it('answers a POST without a body with 400 naming the body', async () => {
    const res = await sandbox.call('POST', '/v1/order');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'is required' }]);
    // An empty body under a JSON Content-Type is none as well, not {} with every field missing.
    const empty = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').set('Content-Length', '0');
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ success: false, message: 'A JSON body is required.', errors: [{ field: 'body', message: 'is required' }] });
  });

  it.each([['[]'], ['"text"'], ['null'], ['42']])('answers the JSON body %s with a 400 envelope', async (text) => {
    const res = await supertest(sandbox.app).post('/v1/order').set(auth).set('Content-Type', 'application/json').send(text);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
  });

  it('serves the provider spec as JSON without a token', async () => {
    const res = await sandbox.call('GET', '/__sandbox/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toContain('/v1/order');
  });

  it('answers health without a token', async () => {
    const res = await sandbox.call('GET', '/__sandbox/health', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
  });
});

/** A GET through node's own client, which sends what fetch would refuse (an `Expect` header, a request target as it is). */
const nodeGet = (base: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: new URL(base).port, method: 'GET', path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject).end();
  });

describe('a body sent to a control call that takes none', () => {
  it.each([
    ['POST', '/__sandbox/reset', '{"x":1}'],
    ['POST', '/__sandbox/reset', 'garbage'],
    ['POST', '/__sandbox/checks', '[1,2]'],
    ['DELETE', '/__sandbox/faults', '{"x":1}'],
  ])('%s %s with %s answers 400 naming body, and does nothing', async (method, path, body) => {
    const rule = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder' }, action: { type: 'status', status: 500 } } });
    expect(rule.status).toBe(201);
    const res = await supertest(sandbox.app)[method === 'POST' ? 'post' : 'delete'](path).set(auth).set('Content-Type', 'application/json').send(body);
    expect([res.status, res.body.errors]).toEqual([400, [{ field: 'body', message: 'this call takes no body: send none, or {}' }]]);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toHaveLength(1);
  });

  it('refuses a body of another type too (curl -d sends a form), though it is not read', async () => {
    const res = await supertest(sandbox.app).post('/__sandbox/reset').set(auth).set('Content-Type', 'application/x-www-form-urlencoded').send('{"x":1}');
    expect([res.status, res.body.errors]).toEqual([400, [{ field: 'body', message: 'this call takes no body: send none, or {}' }]]);
  });

  // A pattern that backtracks over a body of spaces took minutes of the loop for 400 KB (every partner waits): this one is answered.
  it('answers a body of 400 KB of spaces and an x, not holding the loop', async () => {
    const roomy = await testSandbox({ bodyLimit: '1mb' });
    try {
      const res = await supertest(roomy.app).post('/__sandbox/reset').set(auth).set('Content-Type', 'application/json').send(`${' '.repeat(400_000)}x`);
      expect([res.status, res.body.errors]).toEqual([400, [{ field: 'body', message: 'this call takes no body: send none, or {}' }]]);
    } finally {
      await roomy.close();
    }
  }, 20_000);

  it.each(['', '{}', ' { } ', 'null'])('takes %j as no body', async (body) => {
    const res = await supertest(sandbox.app).post('/__sandbox/reset').set(auth).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(200);
  });

  it("leaves the provider's operations as the provider is: a GET's body is not read", async () => {
    const res = await supertest(sandbox.app).get('/v1/order/tracking/SBX0000000000').set(auth).set('Content-Type', 'application/json').send('{"x":1}');
    expect(res.status).not.toBe(400);
  });
});

describe('a query parameter a control call does not know', () => {
  it('is refused naming it and the parameters the call takes: a misspelt filter would answer for everything', async () => {
    const res = await supertest(sandbox.app).get('/__sandbox/webhooks/deliveries?endpointId=ep_1').set(auth);
    expect([res.status, res.body.errors]).toEqual([400, [{ field: 'endpointId', message: 'is not a parameter of this call (it takes order_no, status, event, endpoint_id, limit, cursor)' }]]);
  });

  it('does nothing when the call changes something: a reset with one does not reset', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder' }, action: { type: 'status', status: 500 } } });
    const res = await supertest(sandbox.app).post('/__sandbox/reset?everything=1').set(auth);
    expect([res.status, res.body.errors]).toEqual([400, [{ field: 'everything', message: 'is not a parameter of this call (it takes none)' }]]);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toHaveLength(1);
  });

  it('leaves the known ones and the provider\'s operations alone (the provider ignores what it does not know)', async () => {
    expect((await supertest(sandbox.app).get('/__sandbox/orders?status=created&limit=1').set(auth)).status).toBe(200);
    expect((await supertest(sandbox.app).get('/__sandbox/report?format=json').set(auth)).status).toBe(200);
    const provider = await supertest(sandbox.app).get('/v1/order/tracking/SBX0000000000?utm_source=x').set(auth);
    expect(provider.status).toBe(404);
    // The calls without a token, which probes, scrapers and image proxies call with parameters of their own.
    for (const path of ['/__sandbox/health?_=1700000000', '/__sandbox/metrics?target=sandbox', '/__sandbox/openapi.json?v=2']) {
      expect((await supertest(sandbox.app).get(path)).status, path).toBe(200);
    }
  });
});

describe('an Expect header other than 100-continue (a real server)', () => {
  it('answers 417 with the envelope naming header.expect, on any route, and the sandbox keeps serving', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    try {
      const answer = await nodeGet(server.url, '/__sandbox/health', { expect: 'foo' });
      expect(answer.status).toBe(417);
      expect(answer.type).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toEqual({ success: false, message: expect.stringContaining('"foo"'), errors: [{ field: 'header.expect', message: 'must be 100-continue or absent' }] });
      expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

/** Sends `request` as written on a connection of its own to the sandbox at `url`; its status and body once the connection closes. */
const rawExchange = (url: string, request: string) =>
  new Promise<{ status: number; body: string }>((resolve) => {
    let answer = '';
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    socket.on('error', () => undefined); // a reset closes it too: what it read is checked
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.once('close', () => resolve({ status: Number(answer.split(' ')[1]), body: answer.slice(answer.indexOf('\r\n\r\n') + 4) }));
    socket.write(request);
  });

describe('header text beyond ASCII, sent as UTF-8 as curl sends it (a real server)', () => {
  it('acts for a client whose id is beyond ASCII, names an unknown scenario or chaos mode as it was written, not as Latin-1 mojibake, and journals it so', async () => {
    const server = await createSandbox({ clock: 'manual', clients: [{ token: 'token-muller', id: 'Müller GmbH' }, { token: 'token-sato', id: '佐藤' }, { token: 'token-societa', id: 'Società' }, { token: 'token-system', id: 'システム' }], adminTokens: ['token-admin'] });
    try {
      // socket.write sends the text as UTF-8: the bytes curl sends for `-H 'X-Sandbox-Client: 佐藤'`.
      const whoami = async (token: string, client: string) =>
        JSON.parse((await rawExchange(server.url, `GET /__sandbox/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Sandbox-Client: ${client}\r\nConnection: close\r\n\r\n`)).body);
      expect((await whoami('token-admin', '佐藤')).client.id).toBe('佐藤');
      expect((await whoami('token-admin', 'Müller GmbH')).client.id).toBe('Müller GmbH');
      expect((await whoami('token-muller', 'Müller GmbH')).client.id).toBe('Müller GmbH');
      expect((await whoami('token-admin', 'Mülle')).message).toContain('No client "Mülle"');
      // à and ム end in the byte A0, which Latin-1 reads as a no-break space: a trim before the decoding took it.
      expect((await whoami('token-admin', 'Società')).client.id).toBe('Società');
      expect((await whoami('token-admin', 'システム')).client.id).toBe('システム');
      expect((await whoami('token-admin', 'Società\r\nX-Sandbox-Client: Società')).client.id).toBe('Società');
      const body = JSON.stringify(createRequest(1));
      const create = await rawExchange(server.url, `POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-sato\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Sandbox-Scenario: deliveréd\r\nConnection: close\r\n\r\n${body}`);
      expect([create.status, JSON.parse(create.body).message]).toEqual([400, 'Unknown scenario "deliveréd".']);
      const chaos = await rawExchange(server.url, `POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-sato\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Sandbox-Webhook-Chaos: retard, duplicaté\r\nConnection: close\r\n\r\n${body}`);
      expect([chaos.status, JSON.parse(chaos.body).errors[0].message]).toEqual([400, expect.stringContaining('unknown chaos mode "retard", "duplicaté"')]);
      // The journal keeps the sandbox's headers as the client wrote them too.
      const journal = await rawExchange(server.url, `GET /__sandbox/requests HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-admin\r\nX-Sandbox-Client: 佐藤\r\nConnection: close\r\n\r\n`);
      const scenarios = JSON.parse(journal.body).requests.map((entry: { headers: Record<string, string> }) => entry.headers['x-sandbox-scenario'] ?? entry.headers['x-sandbox-webhook-chaos']);
      expect(scenarios).toEqual(expect.arrayContaining(['deliveréd', 'retard, duplicaté']));
      expect((await rawExchange(server.url, `GET /v1/couriers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-admin\r\nX-Sandbox-Client: 佐藤\r\nConnection: close\r\n\r\n`)).status).toBe(200);
      const acting = await rawExchange(server.url, `GET /__sandbox/requests HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-admin\r\nX-Sandbox-Client: 佐藤\r\nConnection: close\r\n\r\n`);
      expect(JSON.parse(acting.body).requests.map((entry: { headers: Record<string, string> }) => entry.headers['x-sandbox-client'])).toContain('佐藤');
    } finally {
      await server.close();
    }
  });
});

describe('a request Node\'s parser refuses (a real server)', () => {
  it.each([
    ['Content-Length: abc', 'header.content-length', 'POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nContent-Length: abc\r\n\r\n'],
    ['two Content-Lengths', 'header.content-length', 'POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'],
    ['Transfer-Encoding: gzip', 'header.transfer-encoding', 'POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nTransfer-Encoding: gzip\r\n\r\n'],
    ['a method FOO', 'method', 'FOO /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n'],
    ['HTTP/2.5', 'version', 'GET /v1/couriers HTTP/2.5\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n'],
    ['a request target without its leading slash', 'path', 'GET v1/couriers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n'],
    ['a header name with a space', 'header', 'GET /v1/couriers HTTP/1.1\r\nHo st: x\r\n\r\n'],
    ['bad chunked data', 'body', 'POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
  ])('answers %s with a 400 envelope naming %s, and keeps serving', async (_what, field, request) => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    try {
      const answer = await rawExchange(server.url, request);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ success: false, message: expect.stringContaining('not valid HTTP/1.1'), errors: [{ field, message: expect.any(String) }] });
      expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('logs each request it refuses before the app (no path or client was read): its status, what was refused and the address', async () => {
    const lines: Array<[Record<string, unknown>, string]> = [];
    // Node's timeouts shortened, and checked every 50 ms rather than every 30 s.
    const server = createServer({ headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50, requireHostHeader: false }, (_req, res) => res.end('ok'));
    answerClientErrors(server, 16384, { info: (fields: Record<string, unknown>, message: string) => void lines.push([fields, message]) } as never);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      expect((await rawExchange(url, 'FOO /v1/order HTTP/1.1\r\nHost: x\r\n\r\n')).status).toBe(400);
      expect((await rawExchange(url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n')).status).toBe(400);
      // Three pipelined: one answer, as the connection closes after it, and one line.
      expect((await rawExchange(url, 'GET /v1/couriers HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n'.repeat(3))).status).toBe(417);
      expect((await rawExchange(url, 'GET /v1/couriers HTTP/1.1\r\nHost: x\r\n')).status).toBe(408); // its headers never end
      const remote = '127.0.0.1';
      expect(lines).toEqual([
        [{ status: 400, code: 'HPE_INVALID_METHOD', remote }, 'request refused before the app'],
        [{ status: 400, method: 'CONNECT', remote }, 'request refused before the app'],
        [{ status: 417, expect: 'teapot', remote }, 'request refused before the app'],
        [{ status: 408, code: 'ERR_HTTP_REQUEST_TIMEOUT', remote }, 'request refused before the app'],
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('closes connections it answered outside the HTTP server (CONNECT, h2c, a refused listen) even when their clients keep them half-open: a stop does not wait for them', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    const port = Number(new URL(server.url).port);
    const held: Socket[] = [];
    const answered = (request: string) =>
      new Promise<string>((resolve) => {
        // allowHalfOpen: the client reads the answer and its end, and never ends its own side.
        const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(request));
        held.push(socket);
        let text = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        socket.once('end', () => resolve(text));
        socket.on('error', () => undefined);
      });
    try {
      expect(await answered('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
      expect(await answered('GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
      expect(await answered('GET /__sandbox/listen?name=laptop HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n')).toMatch(/^HTTP\/1\.1 401 /);
      expect(await answered('GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
      const started = Date.now();
      await Promise.race([server.close(), new Promise((_, reject) => setTimeout(() => reject(new Error('the stop waited for the half-open connections')), 8_000))]);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      for (const socket of held) socket.destroy();
      await server.close();
    }
  }, 15_000);

  it('answers a CONNECT (a proxy\'s method) with a 400 envelope naming the method, not a closed connection', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    try {
      const answer = await rawExchange(server.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ success: false, message: expect.stringContaining('not a proxy'), errors: [{ field: 'method', message: 'must not be CONNECT' }] });
    } finally {
      await server.close();
    }
  });
});

describe('a request without a Host header (a real server)', () => {
  it('answers an HTTP/1.1 one 400 with the envelope naming header.host, and serves an HTTP/1.0 one, which needs none', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    try {
      // Written by hand: node's client and fetch always send Host.
      const exchange = (request: string) => rawExchange(server.url, request);
      const without = await exchange('GET /v1/couriers HTTP/1.1\r\nAuthorization: Bearer t\r\n\r\n');
      expect(without.status).toBe(400);
      expect(JSON.parse(without.body)).toEqual({ success: false, message: expect.stringContaining('needs a Host header'), errors: [{ field: 'header.host', message: 'is required' }] });
      expect((await exchange('GET /__sandbox/health HTTP/1.0\r\n\r\n')).status).toBe(200);
      expect((await exchange('GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('two Authorization headers (a real server)', () => {
  it('answers 401 naming header.authorization instead of acting as the first token, also on a listen upgrade, and one header still works', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['token-a', 'token-b'] });
    try {
      // Written by hand: node's client and fetch send one header of a name.
      const get = (headers: string) =>
        new Promise<{ status: number; body: string }>((resolve) => {
          let answer = '';
          const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
          socket.on('error', () => undefined); // a reset closes it too: what it read is checked
          socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
          socket.once('close', () => resolve({ status: Number(answer.split(' ')[1]), body: answer.slice(answer.indexOf('\r\n\r\n') + 4) }));
          socket.write(`GET /__sandbox/orders HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`);
        });
      const two = await get('Authorization: Bearer token-a\r\nauthorization: Bearer token-b\r\n');
      expect(two.status).toBe(401);
      expect(JSON.parse(two.body)).toEqual({ success: false, message: expect.stringContaining('two Authorization headers'), errors: [{ field: 'header.authorization', message: 'must be given once, as plain text' }] });
      expect((await get('Authorization: Bearer token-a\r\n')).status).toBe(200);

      // The same on the WebSocket upgrade of a listen session, which no router stage sees.
      const listen = (headers: string) =>
        new Promise<{ status: number; body: string }>((resolve) => {
          let answer = '';
          const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
          socket.on('error', () => undefined); // a reset closes it too: what it read is checked
          const done = () => resolve({ status: Number(answer.split(' ')[1]), body: answer.slice(answer.indexOf('\r\n\r\n') + 4) });
          socket.setEncoding('utf8').on('data', (chunk: string) => {
            answer += chunk;
            if (answer.startsWith('HTTP/1.1 101') && answer.includes('\r\n\r\n')) socket.destroy();
          });
          socket.once('close', done);
          const handshake = 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n';
          socket.write(`GET /__sandbox/listen?name=laptop HTTP/1.1\r\nHost: x\r\n${headers}${handshake}\r\n`);
        });
      const twoOnListen = await listen('Authorization: Bearer token-a\r\nauthorization: Bearer token-b\r\n');
      expect(twoOnListen.status).toBe(401);
      expect(JSON.parse(twoOnListen.body)).toMatchObject({ success: false, errors: [{ field: 'header.authorization', message: 'must be given once, as plain text' }] });
      expect((await listen('Authorization: Bearer token-a\r\n')).status).toBe(101);
    } finally {
      await server.close();
    }
  });
});

describe("the sandbox's one-valued headers given twice (a real server)", () => {
  it('answers 400 naming the header, instead of a joined value that names no scenario or client, and creates nothing', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['token-a', 'token-b'], adminTokens: ['admin-token'] });
    try {
      // Written by hand: node's client and fetch send one header of a name.
      const send = (request: string) => rawExchange(server.url, request);
      const body = JSON.stringify(createRequest(1));
      const create = (headers: string) =>
        send(`POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}Connection: close\r\n\r\n${body}`);
      const twoScenarios = await create('X-Sandbox-Scenario: delivered\r\nx-sandbox-scenario: returned\r\n');
      expect(twoScenarios.status).toBe(400);
      expect(JSON.parse(twoScenarios.body)).toEqual({ success: false, message: expect.stringContaining('two X-Sandbox-Scenario headers'), errors: [{ field: 'header.x-sandbox-scenario', message: 'must be given once, as plain text' }] });
      const orders = () => send('GET /__sandbox/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nConnection: close\r\n\r\n');
      expect(JSON.parse((await orders()).body).total).toBe(0);
      expect((await create('X-Sandbox-Scenario: returned\r\n')).status).toBe(201);
      // Node keeps the first of two Content-Types: the body would be read by it whatever the second says.
      const twoTypes = await send(`POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      expect([twoTypes.status, JSON.parse(twoTypes.body).errors]).toEqual([400, [{ field: 'header.content-type', message: 'must be given once, as plain text' }]]);
      expect(JSON.parse((await orders()).body).total).toBe(1);
      // The same type twice (as Pact's verifier sends a pact's) is one type: served.
      const sameType = await send(`POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nContent-Type: application/json\r\ncontent-type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      expect(sameType.status).toBe(201);
      // A read that ignores the header is not refused for one repeated as it was.
      expect((await send('GET /v1/couriers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nX-Sandbox-Scenario: returned\r\nX-Sandbox-Scenario: returned\r\nConnection: close\r\n\r\n')).status).toBe(200);

      const asAdmin = (headers: string) => send(`GET /__sandbox/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token\r\n${headers}Connection: close\r\n\r\n`);
      const clientId = JSON.parse((await send('GET /__sandbox/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-a\r\nConnection: close\r\n\r\n')).body).client.id as string;
      const twoClients = await asAdmin(`X-Sandbox-Client: ${clientId}\r\nX-Sandbox-Client: another-client\r\n`);
      expect([twoClients.status, JSON.parse(twoClients.body).errors]).toEqual([400, [{ field: 'header.x-sandbox-client', message: 'must be given once, as plain text' }]]);
      expect((await asAdmin(`X-Sandbox-Client: ${clientId}\r\n`)).status).toBe(200);
      // The same value twice names one client or scenario (Node alone would join them into "a, a").
      const sameClient = await asAdmin(`X-Sandbox-Client: ${clientId}\r\nX-Sandbox-Client: ${clientId}\r\n`);
      expect([sameClient.status, JSON.parse(sameClient.body).total]).toEqual([200, 2]);
      expect((await create('X-Sandbox-Scenario: returned\r\nx-sandbox-scenario: returned\r\n')).status).toBe(201);
    } finally {
      await server.close();
    }
  });
});

describe('an upgrade pipelined behind a request still being answered (a real server)', () => {
  it('answers both, in order, and keeps serving: one packet used to end the process', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    try {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      socket.on('error', () => undefined); // a reset closes it too: what it read is checked
      let answers = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (answers += chunk));
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write('GET /__sandbox/health HTTP/1.1\r\nHost: x\r\n\r\nGET /__sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
      await ended;
      expect(answers.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
      expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('a request target the router cannot parse (a real server)', () => {
  it('answers 404 with the envelope, not express\'s HTML page', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    try {
      // An absolute-form target whose host no Node line parses (Node 24 came to parse
      // http://xn--/..., which Node 20 refuses, and routed it as /v1/order).
      const answer = await nodeGet(server.url, 'http://[::1/v1/order');
      expect(answer.status).toBe(404);
      expect(answer.type).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toMatchObject({ success: false, errors: [] });
    } finally {
      await server.close();
    }
  });

  /**
   * A sandbox whose tracking reads a fault holds 300 ms, a raw connection that sends
   * `requests`, and the stop once the first is held (`whileStopping` right after it begins): the
   * answers on that connection, and how long the stop took.
   */
  async function stopWithReadInFlight(requests: string, whileStopping?: (socket: Socket) => void): Promise<{ answers: string[]; stopMs: number }> {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'] });
    try {
      expect((await supertest(server.app).post('/__sandbox/faults').set({ Authorization: 'Bearer t' }).send({ match: { operation_id: 'trackOrder' }, action: { type: 'latency', ms: 300 }, times: 5 })).status).toBe(201);
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      socket.on('error', () => undefined); // a reset closes it too: what it read is checked
      let answers = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (answers += chunk));
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(requests);
      // The read is in flight once its fault rule was hit (it holds it 300 ms from then).
      const held = async () => ((await supertest(server.app).get('/__sandbox/faults').set({ Authorization: 'Bearer t' })).body.rules as Array<{ hits: number }>)[0]!.hits > 0;
      for (const begun = Date.now(); !(await held()) && Date.now() - begun < 5_000; ) await new Promise((r) => setTimeout(r, 5));
      expect(await held()).toBe(true);
      const started = Date.now();
      const closing = server.close();
      whileStopping?.(socket);
      await Promise.all([closing, ended]);
      return { answers: answers.split(/(?=HTTP\/1\.1 )/), stopMs: Date.now() - started };
    } finally {
      await server.close();
    }
  }
  const TRACK_READ = 'GET /v1/order/tracking/SBXNOSUCH01 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n';
  const HEALTH = 'GET /__sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n';

  it('once stopping, answers a request in flight with Connection: close, so its client does not send the next one on a connection about to close', async () => {
    const { answers } = await stopWithReadInFlight(TRACK_READ);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 404 /);
    expect(answers[0]).toMatch(/\r\nconnection: close\r\n/i);
  });

  it('once stopping, answers both requests a client pipelined before it, the connection kept open for the second', async () => {
    const [first, second] = (await stopWithReadInFlight(TRACK_READ + HEALTH)).answers;
    expect(first).toMatch(/^HTTP\/1\.1 404 /);
    expect(first).not.toMatch(/\r\nconnection: close\r\n/i);
    expect(second).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('once stopping, refuses a request on a connection kept alive with 503 and Connection: close, and still finishes the one in flight', async () => {
    // The next request on the same connection, sent while the first is still in flight.
    const { answers, stopMs } = await stopWithReadInFlight(TRACK_READ, (socket) => socket.write(HEALTH));
    expect(stopMs).toBeLessThan(5_000);
    const [first, second] = answers;
    expect(first).toMatch(/^HTTP\/1\.1 404 /);
    expect(first).toMatch(/\r\nconnection: keep-alive\r\n/i);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(second).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(second).toContain('"message":"The sandbox is stopping');
  });
});
