import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest, item } from '../support/orders.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

const TRACK = '/v1/order/tracking/SBXNOSUCH01';
/** A 400 envelope is documented for every provider operation, so the answers stay checkable against the spec. */
const fail400 = { type: 'status', status: 400 };

describe('POST /__sandbox/faults', () => {
  it('answers 201 with the rule, its defaults filled in', async () => {
    const res = await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      match: {},
      action: fail400,
      times: 1,
      remaining: 1,
      probability: 1,
      matched: 0,
      hits: 0,
      created_at: expect.any(String),
    });
  });

  it.each([
    ['an unknown action type', { action: { type: 'explode' } }, 'action.type'],
    ['a status action without status', { action: { type: 'status' } }, 'action.status'],
    ['a latency without ms', { action: { type: 'latency' } }, 'action.ms'],
    ['a latency range the wrong way round', { action: { type: 'latency', ms: 500, max_ms: 100 } }, 'action.max_ms'],
    ['a field the action does not use', { action: { type: 'hang', after_ms: 5 } }, 'action.after_ms'],
    ['a dribble without a rate', { action: { type: 'dribble' } }, 'action.bytes_per_second'],
    ['a path glob that is not a path', { match: { path: 'v1/order' }, action: fail400 }, 'match.path'],
    // Request paths are ASCII; 500 astral characters made a compiled glob of ~240 KB.
    ['a path glob with a character no request path holds', { match: { path: `/v1/${'\u{1F600}'.repeat(3)}` }, action: fail400 }, 'match.path'],
    ['a path glob with a space', { match: { path: '/v1/order tracking' }, action: fail400 }, 'match.path'],
    ['a body key that is not a field path', { match: { body: { 'items[x]': 1 } }, action: fail400 }, 'match.body.items[x]'],
    // A match no request can meet: a test of the client's handling would pass having tested nothing.
    ['an operationId in the wrong letter case', { match: { operation_id: 'createorder' }, action: fail400 }, 'match.operation_id'],
    ['an operationId the spec does not have', { match: { operation_id: 'bogusOp' }, action: fail400 }, 'match.operation_id'],
    ['a method no operation takes', { match: { method: 'FETCH' }, action: fail400 }, 'match.method'],
    ['a path of the control API', { match: { path: '/__sandbox/**' }, action: fail400 }, 'match.path'],
    ['a path no operation has', { match: { path: '/v1/orders' }, action: fail400 }, 'match.path'],
    ['a path with a trailing slash (request paths are matched without one)', { match: { path: '/v1/couriers/' }, action: fail400 }, 'match.path'],
    ['the spec\'s path template pasted as a glob', { match: { path: '/v1/order/tracking/{order_no}' }, action: fail400 }, 'match.path'],
    ['an operationId with a method it is not', { match: { operation_id: 'createOrder', method: 'GET' }, action: fail400 }, 'match.method'],
    ['an operationId with a path glob that misses it', { match: { operation_id: 'createOrder', path: '/v1/order/tracking/*' }, action: fail400 }, 'match.path'],
    ['times 0', { action: fail400, times: 0 }, 'times'],
    ['probability 0', { action: fail400, probability: 0 }, 'probability'],
    ['a misspelt field', { action: fail400, tims: 3 }, 'tims'],
    ['no action', { match: {} }, 'action'],
    ['a header name with a space', { action: { type: 'status', status: 503, headers: { 'Retry After': '5' } } }, 'action.headers.Retry After'],
    ['a header value with a newline', { action: { type: 'status', status: 503, headers: { 'X-A': 'a\r\nb' } } }, 'action.headers.X-A'],
    ['a 1xx status', { action: { type: 'status', status: 101 } }, 'action.status'],
    ['a Trailer header (it stopped the process)', { action: { type: 'status', status: 503, headers: { Trailer: 'x' } } }, 'action.headers.Trailer'],
    ['a Transfer-Encoding header', { action: { type: 'status', status: 503, headers: { 'Transfer-Encoding': 'gzip' } } }, 'action.headers.Transfer-Encoding'],
    ['a Content-Length header', { action: { type: 'status', status: 503, headers: { 'content-length': '0' } } }, 'action.headers.content-length'],
    ['a Connection header', { action: { type: 'status', status: 503, headers: { Connection: 'close' } } }, 'action.headers.Connection'],
    // A partner's rule acting on the browser that reads its answers: the operator's dashboard followed a 307 to POST /__sandbox/reset-all.
    ['a Location header (a redirect a browser follows)', { action: { type: 'status', status: 307, headers: { Location: '/__sandbox/reset-all' } } }, 'action.headers.Location'],
    ['a Set-Cookie header', { action: { type: 'status', status: 404, headers: { 'Set-Cookie': 'c1=x; Max-Age=31536000' } } }, 'action.headers.Set-Cookie'],
    ['a Clear-Site-Data header', { action: { type: 'status', status: 404, headers: { 'Clear-Site-Data': '"storage"' } } }, 'action.headers.Clear-Site-Data'],
    ['a NEL header (a reporting policy the browser keeps)', { action: { type: 'status', status: 200, headers: { NEL: '{"report_to":"x","max_age":31536000}' } } }, 'action.headers.NEL'],
    ['an Access-Control header', { action: { type: 'status', status: 200, headers: { 'Access-Control-Allow-Origin': 'https://evil.test' } } }, 'action.headers.Access-Control-Allow-Origin'],
    ['a Content-Type express cannot read', { action: { type: 'status', status: 503, headers: { 'Content-Type': 'text/html; ===' } } }, 'action.headers.Content-Type'],
    // A client reads whole seconds or an HTTP date; the readiness report read 1.5 as a date in 2001, a wait of 0.
    ['a Retry-After of 1.5 seconds', { action: { type: 'status', status: 503, headers: { 'Retry-After': '1.5' } } }, 'action.headers.Retry-After'],
    ['a Retry-After of -1', { action: { type: 'status', status: 429, headers: { 'retry-after': '-1' } } }, 'action.headers.retry-after'],
    ['a Retry-After of soon', { action: { type: 'status', status: 503, headers: { 'Retry-After': 'soon' } } }, 'action.headers.Retry-After'],
    ['a Retry-After of Mon 1 (not an HTTP date, though Date.parse reads one)', { action: { type: 'status', status: 503, headers: { 'Retry-After': 'Mon 1' } } }, 'action.headers.Retry-After'],
    // A request whose path parameter breaks its pattern is answered 400 before any rule applies: such a rule never fired.
    ['a path whose order number is no number', { match: { operation_id: 'getOrderDetail', path: '/v1/order/abc' }, action: fail400 }, 'match.path'],
    // A regular expression's habit in a glob: `.` is literal, and no AWB holds one.
    ['a path whose AWB glob needs a character no AWB has', { match: { path: '/v1/order/tracking/.*' }, action: fail400 }, 'match.path'],
    ['a GET of /v1/order/cancel (no order number: a path of POST only)', { match: { method: 'GET', path: '/v1/order/cancel' }, action: fail400 }, 'match.method'],
    ['a body criterion of a tracking read (a GET has no body)', { match: { operation_id: 'trackOrder', body: { courier_code: 'jne' } }, action: fail400 }, 'match.body'],
    // Validation runs before any rule: a create whose cod is a number is answered 400 first.
    ['a body value the spec refuses (a number where text is wanted)', { match: { operation_id: 'createOrder', body: { 'items[0].cod': 0 } }, action: fail400 }, 'match.body.items[0].cod'],
    ['a whole item without the fields an item must have', { match: { operation_id: 'createOrder', body: { 'items[0]': { cod: '0' } } }, action: fail400 }, 'match.body.items[0]'],
    // A create in text/plain is answered 415 (or 400 without a body) before any rule applies: such a rule never fired.
    ['a create whose Content-Type is text/plain', { match: { operation_id: 'createOrder', headers: { 'Content-Type': 'text/plain' } }, action: fail400 }, 'match.headers.Content-Type'],
    ['a create whose JSON is in UTF-16', { match: { method: 'POST', path: '/v1/order', headers: { 'content-type': 'application/json; charset=utf-16le' } }, action: fail400 }, 'match.headers.content-type'],
    ['a create in an encoding the sandbox does not take (a 415)', { match: { operation_id: 'createOrder', headers: { 'Content-Encoding': 'compress' } }, action: fail400 }, 'match.headers.Content-Encoding'],
    ['a create without a body (a 400)', { match: { operation_id: 'createOrder', headers: { 'Content-Length': '0' } }, action: fail400 }, 'match.headers.Content-Length'],
    ['a create over the body limit of 1mb (a 413)', { match: { operation_id: 'createOrder', headers: { 'Content-Length': '1048577' } }, action: fail400 }, 'match.headers.Content-Length'],
    // A request's header value arrives trimmed: a criterion with spaces around it is met by none.
    ['a header name no request can carry', { match: { headers: { 'bad name': 'x' } }, action: fail400 }, 'match.headers.bad name'],
    // Node leaves a `__proto__` header out of the request headers it reads (JSON.parse: an own key, as a partner's JSON has it).
    ['a __proto__ header (node reads none)', { match: { operation_id: 'listCouriers', headers: JSON.parse('{"__proto__":"x"}') }, action: fail400 }, 'match.headers.__proto__'],
    ['a header criterion with a space around its value', { match: { operation_id: 'trackOrder', headers: { 'Content-Encoding': 'gzip ' } }, action: fail400 }, 'match.headers.Content-Encoding'],
    ['an Expect other than 100-continue (a 417 on every path)', { match: { headers: { Expect: 'foo' } }, action: fail400 }, 'match.headers.Expect'],
    ['a Content-Length that is no length', { match: { operation_id: 'trackOrder', headers: { 'content-length': 'ten' } }, action: fail400 }, 'match.headers.content-length'],
  ])('returns 400 naming the field for %s', async (_, body, field) => {
    const res = await sandbox.call('POST', '/__sandbox/faults', { body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it.each([
    ['an empty action', { action: {} }, ['action.type']],
    ['an action with a status but no type', { action: { status: 503 } }, ['action.type']],
    ['an action with a bad status and no type', { action: { status: 'x' } }, ['action.type', 'action.status']],
  ])('names only what is wrong in %s: no field of an action type not chosen', async (_, body, fields) => {
    const res = await sandbox.call('POST', '/__sandbox/faults', { body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([...fields].sort());
  });

  it('takes a Content-Type criterion that a request can meet, and fires on it', async () => {
    const create = { match: { operation_id: 'createOrder', headers: { 'content-type': 'application/json; charset=UTF-8' } }, action: fail400 };
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: create })).status).toBe(201);
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { 'content-type': 'application/json; charset=UTF-8' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/Fault injected by the sandbox/);
    // A tracking read takes no body: a GET that says text/plain gets past the edge and meets the rule.
    const read = { match: { operation_id: 'trackOrder', headers: { 'content-type': 'text/plain' } }, action: fail400 };
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: read })).status).toBe(201);
    expect((await sandbox.call('GET', TRACK)).status).toBe(404);
    expect((await sandbox.call('GET', TRACK, { headers: { 'content-type': 'text/plain' } })).body.message).toMatch(/Fault injected by the sandbox/);
    // Nor does the edge refuse a GET's Content-Encoding (it has no body to decode), nor an Expect of 100-continue, nor a length over the body limit.
    for (const headers of [{ 'Content-Encoding': 'compress' }, { Expect: '100-continue' }, { Expect: '100-Continue, foo' }, { 'Content-Length': '1048577' }]) {
      expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder', headers }, action: fail400 } })).status).toBe(201);
    }
    // Content-Types the API reads as JSON in UTF-8, however they are written, meet a create's rule.
    for (const type of ['application/json;', 'application/json; foo', 'application/vnd.partner+json', 'application/json; charset=utf8']) {
      expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', headers: { 'Content-Type': type } }, action: fail400 } })).status).toBe(201);
    }
    // A gzip create may say more than the limit: the limit counts its body decoded.
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', headers: { 'Content-Length': '1048673', 'Content-Encoding': 'gzip' } }, action: fail400 } })).status).toBe(201);
    // A create of exactly the body limit (1mb) is read.
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', headers: { 'Content-Length': '1048576' } }, action: fail400 } })).status).toBe(201);
  });

  it('meets a header criterion beyond ASCII in the UTF-8 a client sends, and the journal and its counts show the value as sent', async () => {
    const rule = { match: { path: '/v1/couriers', headers: { 'X-City': 'Köln 😀' } }, action: { type: 'status', status: 503 } };
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: rule })).status).toBe(201);
    // As curl sends it: the UTF-8 bytes, which Node reads one per character (Latin-1).
    const utf8 = Buffer.from('Köln 😀', 'utf8').toString('latin1');
    expect((await sandbox.call('GET', '/v1/couriers', { headers: { 'X-City': utf8 } })).status).toBe(503);
    expect((await sandbox.call('GET', '/v1/couriers', { headers: { 'X-City': 'Koln' } })).status).toBe(200);
    const journal = await sandbox.call('GET', '/__sandbox/requests?limit=2');
    expect(journal.body.requests.map((r: { headers: Record<string, string> }) => r.headers['x-city'])).toEqual(['Köln 😀', 'Koln']);
    expect((await sandbox.call('POST', '/__sandbox/requests/count', { body: { headers: { 'x-city': 'Köln 😀' } } })).body.count).toBe(1);
  });

  it('takes a rule whose answer has a Content-Type with parameters and headers of its own', async () => {
    const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '5', 'X-Request-Id': 'abc' };
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { action: { type: 'status', status: 503, body: { message: 'busy' }, headers } } })).status).toBe(201);
    const res = await sandbox.call('GET', TRACK);
    expect(res.status).toBe(503);
    expect(res.headers).toMatchObject({ 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5', 'x-request-id': 'abc' });
  });

  it("sends a text body under a type that is not JSON as written: a gateway's HTML error page", async () => {
    const page = '<html><body>502 Bad Gateway</body></html>';
    const html = { match: { path: TRACK }, action: { type: 'status', status: 502, body: page, headers: { 'Content-Type': 'text/html' } }, times: 1 };
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: html })).status).toBe(201);
    const res = await sandbox.call('GET', TRACK);
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toBe(page);
  });

  it('drops the connection and goes on serving when a rule kept from before these checks sets a header no answer can carry', async () => {
    // As a data file written by an earlier sandbox may hold it.
    const settings = (await sandbox.services.storage.settings.get('client-a'))!;
    const rule = { id: 'fault_1', match: {}, action: { type: 'status', status: 503, headers: { Trailer: 'x' } }, times: 5, remaining: 5, probability: 1, matched: 0, hits: 0, created_at: '2026-01-01T00:00:00.000Z' };
    await sandbox.services.storage.settings.put({ ...settings, faults: [rule as never], fault_seq: 1 });
    await expect(sandbox.call('GET', TRACK)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect((await sandbox.call('GET', TRACK, { token: TOKEN_B })).status).toBe(404);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toHaveLength(1);
  });

  it('leaves out the browser-acting headers of a rule kept from before they were refused, answering the rest', async () => {
    const settings = (await sandbox.services.storage.settings.get('client-a'))!;
    const rule = { id: 'fault_1', match: {}, action: { type: 'status', status: 307, headers: { Location: '/__sandbox/reset-all', 'Set-Cookie': 'c=1', 'X-Kept': 'yes' } }, times: 5, remaining: 5, probability: 1, matched: 0, hits: 0, created_at: '2026-01-01T00:00:00.000Z' };
    await sandbox.services.storage.settings.put({ ...settings, faults: [rule as never], fault_seq: 1 });
    const res = await sandbox.call('GET', TRACK);
    expect(res.status).toBe(307);
    expect(res.headers['x-kept']).toBe('yes');
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('returns 401 without a token', async () => {
    expect((await sandbox.call('POST', '/__sandbox/faults', { token: null, body: { action: fail400 } })).status).toBe(401);
  });

  it('refuses a rule larger than 16 KiB, naming the body', async () => {
    const res = await sandbox.call('POST', '/__sandbox/faults', { body: { action: { ...fail400, body: { pad: 'x'.repeat(20_000) } } } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: expect.stringContaining('16384 bytes') }]);
  });

  it('refuses a rule that would take the client\'s rules past 64 KiB of JSON together, saying how to make room', async () => {
    const big = (i: number) => ({ match: { path: '/v1/order', body: { [`note_${i}`]: 'x'.repeat(15_000) } }, action: fail400 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const res = await sandbox.call('POST', '/__sandbox/faults', { body: big(i) });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const refused = await sandbox.call('POST', '/__sandbox/faults', { body: big(4) });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/more than 65536 bytes of JSON together.*DELETE \/__sandbox\/faults/);
    await sandbox.call('DELETE', `/__sandbox/faults/${ids[0]}`);
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: big(4) })).status).toBe(201);
  });

  it('refuses a client its 101st rule with a 400 saying how to make room, and takes one again once a rule is deleted', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      const res = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path: `/v1/order/tracking/X${i}` }, action: fail400 } });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const refused = await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, message: expect.stringMatching(/100 fault rules, the most.*DELETE \/__sandbox\/faults/) });
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toHaveLength(100);
    expect((await sandbox.call('POST', '/__sandbox/faults', { token: TOKEN_B, body: { action: fail400 } })).status).toBe(201);
    await sandbox.call('DELETE', `/__sandbox/faults/${ids[0]}`);
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } })).status).toBe(201);
  });
});

describe('GET and DELETE /__sandbox/faults', () => {
  it("lists only the calling client's rules, oldest first", async () => {
    const first = await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    const second = await sandbox.call('POST', '/__sandbox/faults', { body: { action: { type: 'hang' } } });
    await sandbox.call('POST', '/__sandbox/faults', { token: TOKEN_B, body: { action: fail400 } });
    const res = await sandbox.call('GET', '/__sandbox/faults');
    expect(res.body.rules.map((r: { id: string }) => r.id)).toEqual([first.body.id, second.body.id]);
  });

  it('deletes one rule by id, and answers 404 for an id that is not the client\'s', async () => {
    const mine = await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    await sandbox.call('POST', '/__sandbox/faults', { token: TOKEN_B, body: { action: fail400 } });
    const theirs = await sandbox.call('POST', '/__sandbox/faults', { token: TOKEN_B, body: { action: fail400 } });
    // Rule ids are per client: B's second rule has an id A's rules do not.
    expect((await sandbox.call('DELETE', `/__sandbox/faults/${theirs.body.id}`)).status).toBe(404);
    expect((await sandbox.call('DELETE', `/__sandbox/faults/${mine.body.id}`)).body).toEqual({ success: true, removed: 1 });
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
    expect((await sandbox.call('GET', '/__sandbox/faults', { token: TOKEN_B })).body.rules).toHaveLength(2);
  });

  it('deletes all of the client\'s rules', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    expect((await sandbox.call('DELETE', '/__sandbox/faults')).body).toEqual({ success: true, removed: 2 });
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });

  it('is cleared by POST /__sandbox/reset', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    const res = await sandbox.call('POST', '/__sandbox/reset');
    expect(res.body.removed.faults).toBe(1);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });
});

describe('a rule whose match no request of the spec can meet', () => {
  it("says of a body value the spec refuses what a request with it gets, naming the operations; and takes a value a valid request may have", async () => {
    const refused = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', body: { 'items[0].cod': 0, courier_code: 'jne' } }, action: fail400 } });
    expect(refused.body.errors).toEqual([{ field: 'match.body.items[0].cod', message: expect.stringMatching(/^a request of createOrder with this value is answered 400 \(must be a JSON string.*\) before any fault rule applies/) }]);
    // A field the spec does not name is taken as sent (the API does not refuse unknown fields), and so may be matched.
    for (const body of [{ 'items[0].cod': '0' }, { 'items[0].note_to_self': 'x' }, JSON.parse('{"__proto__": 1}')]) {
      expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', body }, action: fail400 } })).status).toBe(201);
    }
    // A rule past what the check builds (deep, or wide) is taken unchecked, quickly, never a 500.
    for (const key of [`items${'[0]'.repeat(3_000)}`, `items${'[1000]'.repeat(5_000)}`, 'items[200].cod']) {
      const started = performance.now();
      const res = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', body: { [key]: 0 } }, action: fail400 } });
      expect([201, 400]).toContain(res.status);
      expect(performance.now() - started).toBeLessThan(2_000);
    }
    // An item past the most a create holds: no create that passes validation has one, however far past.
    for (const key of ['items[100].cod', 'items[99999999999].cod', `items[${'9'.repeat(400)}]`]) {
      const res = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', body: { [key]: '0' } }, action: fail400 } });
      expect(res.body.errors).toEqual([{ field: `match.body.${key}`, message: expect.stringContaining('answered 400 (items must hold at most 100 entries) before any fault rule applies') }]);
    }
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder', body: { 'items[99].cod': '0' } }, action: fail400 } })).status).toBe(201);
    // With no operation named, it is refused only if every operation that takes a body refuses it: a cancel's body has no items to hold it to text.
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { body: { 'items[0].cod': 0 } }, action: fail400 } })).status).toBe(201);
  });


  it('says why, naming the field and what it may be', async () => {
    const wrongCase = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createorder' }, action: fail400 } });
    expect(wrongCase.body.errors).toEqual([{ field: 'match.operation_id', message: expect.stringMatching(/^is not an operation of the provider spec \(letter case counts: createOrder\); use one of .*createOrder.*trackOrder/) }]);
    const control = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path: '/__sandbox/reset' }, action: fail400 } });
    expect(control.body.errors).toEqual([{ field: 'match.path', message: expect.stringMatching(/control API, whose requests are never provider requests/) }]);
    const typo = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path: '/v1/orders' }, action: fail400 } });
    expect(typo.body.errors).toEqual([{ field: 'match.path', message: expect.stringMatching(/reaches no path of the provider spec; its paths are .*\/v1\/order\b.*\/v1\/order\/tracking\/\{order_no\}/) }]);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });

  it.each([['/v1/order'], ['/v1/order/tracking/*'], ['/v1/order/tracking/SBX1'], ['/v1/**'], ['/**'], ['/v1/order/track*/*'], ['/v1/*/tracking/?*']])('takes the glob %s, which reaches a path of the spec', async (path) => {
    expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path }, action: fail400 } })).status).toBe(201);
  });
});

describe('which requests a rule matches', () => {
  const create = (overrides = {}, headers: Record<string, string> = {}) => ['POST', '/v1/order', { body: createRequest(1, overrides), headers }] as const;
  const track = (headers: Record<string, string> = {}) => ['GET', TRACK, { headers }] as const;
  it.each([
    ['operation_id', { operation_id: 'trackOrder' }, track(), create()],
    ['method', { method: 'post' }, create(), track()],
    ['a path glob', { path: '/v1/order/tracking/*' }, track(), create()],
    ['a header', { headers: { 'X-Test-Case': 'flaky' } }, track({ 'x-test-case': 'flaky' }), track({ 'x-test-case': 'calm' })],
    ['a body field', { body: { courier_code: 'jnt' } }, create({ courier_code: 'jnt', items: [item({ service_code: '1' })] }), create()],
    ['a nested body field', { body: { 'items[0].order_code': 'INV-1' } }, create(), create({ items: [item({ order_code: 'OTHER' })] })],
  ])('by %s', async (_, match, [m1, p1, o1], [m2, p2, o2]) => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { match, action: fail400, times: 10 } });
    const hit = await sandbox.call(m1, p1, o1);
    expect(hit.body.message).toContain('Fault injected');
    const miss = await sandbox.call(m2, p2, o2);
    expect(miss.body.message ?? '').not.toContain('Fault injected');
  });

  it('applies a rule to many requests at once, each counted once, none answered with a conflict (on every store)', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder' }, action: fail400, times: 40 } });
    const answers = await Promise.all(Array.from({ length: 50 }, () => sandbox.call('GET', TRACK)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 400)).toHaveLength(40);
    expect(statuses.filter((s) => s === 404)).toHaveLength(10);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
  });

  it('applies the first matching rule, in the order they were created', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder' }, action: { type: 'status', status: 404 } } });
    await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400 } });
    expect((await sandbox.call('GET', TRACK)).body.message).toContain('status 404');
    expect((await sandbox.call('GET', TRACK)).body.message).toContain('status 400');
  });

  it('applies a rule with probability p to about p of the requests, the same ones under the same seed', async () => {
    const statuses = async (s: TestSandbox) => {
      await s.call('POST', '/__sandbox/faults', { body: { action: fail400, probability: 0.5, times: 1000 } });
      const seen: number[] = [];
      for (let i = 0; i < 24; i++) seen.push((await s.call('GET', TRACK)).status);
      return seen;
    };
    const first = await statuses(sandbox);
    expect(first.filter((s) => s === 400).length).toBeGreaterThan(4);
    expect(first.filter((s) => s === 404).length).toBeGreaterThan(4);
    const twin = await testSandbox();
    expect(await statuses(twin)).toEqual(first);
    await twin.close();
    const rule = (await sandbox.call('GET', '/__sandbox/faults')).body.rules[0];
    expect(rule).toMatchObject({ matched: 24, hits: first.filter((s) => s === 400).length });
  });

  it('does not touch control requests', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { action: fail400, times: 5 } });
    expect((await sandbox.call('GET', '/__sandbox/orders')).status).toBe(200);
  });

  it('needs the token of its owner: another client is unaffected', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { token: TOKEN_A, body: { action: fail400, times: 5 } });
    expect((await sandbox.call('GET', TRACK, { token: TOKEN_B })).status).toBe(404);
  });
});

describe('a rule matching on a credential header', () => {
  const PARTNER_TOKEN = 'partner-a-second-token-0222';
  const READER = 'reader-a-token-0333';

  it('faults that token only, and never shows it whole: not to its author, not to a read_only token of the client', async () => {
    await sandbox.close();
    sandbox = await testSandbox({
      clients: [
        { token: TOKEN_A, id: 'client-a' },
        { token: PARTNER_TOKEN, id: 'client-a' },
        { token: READER, id: 'client-a', role: 'read_only' },
      ],
    });
    const created = await sandbox.call('POST', '/__sandbox/faults', {
      body: { match: { headers: { Authorization: `Bearer ${PARTNER_TOKEN}` }, path: TRACK }, action: fail400, times: 5 },
    });
    expect(created.status).toBe(201);
    expect(created.body.match.headers).toEqual({ Authorization: 'Bear…222' });

    expect((await sandbox.call('GET', TRACK, { token: PARTNER_TOKEN })).status).toBe(400);
    expect((await sandbox.call('GET', TRACK)).status).toBe(404);

    for (const token of [READER, TOKEN_A]) {
      const listed = await sandbox.call('GET', '/__sandbox/faults', { token });
      expect(listed.status).toBe(200);
      expect(listed.body.rules[0].match.headers).toEqual({ Authorization: 'Bear…222' });
      expect(JSON.stringify(listed.body)).not.toContain(PARTNER_TOKEN);
    }
  });

  it("refuses a rule naming another client's token, an admin's in a partner's rule, or no token at all, as it refuses any value no request of the client has: nothing told of whose it is", async () => {
    const ADMIN = 'admin-token-0444';
    await sandbox.close();
    sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: TOKEN_B, id: 'client-b' }], adminTokens: [ADMIN] });
    const rule = (value: string, name = 'Authorization') => sandbox.call('POST', '/__sandbox/faults', { body: { match: { headers: { [name]: value }, path: TRACK }, action: fail400, times: 1 } });
    const answers = [];
    // An admin token in a partner's rule would tell the partner that a guess is one (hostile review).
    for (const value of [`Bearer ${TOKEN_B}`, 'Bearer no-such-token-0555', TOKEN_A, `Basic ${TOKEN_A}`, `Bearer ${ADMIN}`]) answers.push(await rule(value));
    for (const res of answers) expect(res).toMatchObject({ status: 400, body: { errors: [{ field: 'match.headers.Authorization', message: expect.stringMatching(/one of this client's tokens/) }] } });
    expect(new Set(answers.map((res) => JSON.stringify(res.body))).size).toBe(1);
    expect((await rule(`Bearer ${TOKEN_B}`, 'authorization')).body.errors[0].field).toBe('match.headers.authorization');
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toEqual([]);
    // Its own token (in any case of the scheme) is taken; an admin's, whose requests may act for it, in an admin's rule for it.
    expect((await rule(`bearer ${TOKEN_A}`)).status).toBe(201);
    const byAdmin = await sandbox.call('POST', '/__sandbox/faults', { token: ADMIN, headers: { 'X-Sandbox-Client': 'client-a' }, body: { match: { headers: { Authorization: `Bearer ${ADMIN}` }, path: TRACK }, action: fail400, times: 1 } });
    expect(byAdmin.status).toBe(201);
    // The partner's view of that rule shows nothing of the admin token (masked, it showed its last characters).
    const listed = (await sandbox.call('GET', '/__sandbox/faults')).body.rules as Array<{ match: { headers?: Record<string, string> } }>;
    expect(listed.map((r) => r.match.headers?.Authorization)).toEqual([expect.stringMatching(/^bear…/), '[an admin token]']);
  });

  it("masks a criterion of any header whose value carries one of the client's tokens; an admin's rule may not hold an admin token outside Authorization; a partner's is not asked", async () => {
    const ADMIN = 'admin-secret-token-XYZ';
    await sandbox.close();
    sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: READER, id: 'client-a', role: 'read_only' }], adminTokens: [ADMIN] });
    const rule = (headers: Record<string, string>, token = TOKEN_A) =>
      sandbox.call('POST', '/__sandbox/faults', { token, headers: token === ADMIN ? { 'X-Sandbox-Client': 'client-a' } : {}, body: { match: { headers, path: TRACK }, action: fail400, times: 1 } });
    expect((await rule({ 'X-Partner-Credential': `token=${TOKEN_A}`, 'X-Trace': 'plain' })).status).toBe(201);
    for (const name of ['X-Gateway-Key', 'X-Auth-Token']) {
      expect((await rule({ [name]: `k ${ADMIN}` }, ADMIN)).body.errors).toEqual([{ field: `match.headers.${name}`, message: expect.stringMatching(/holds an admin token/) }]);
    }
    // A partner's guess is taken and shown as sent, or masked as any credential is, whatever it holds: its answer tells nothing of admin tokens.
    const guess = await rule({ 'X-Guess': `a|${ADMIN}|b` });
    expect([guess.status, guess.body.match.headers]).toEqual([201, { 'X-Guess': `a|${ADMIN}|b` }]);
    const [admins, other] = [await rule({ 'X-Api-Key': `Bearer ${ADMIN}` }), await rule({ 'X-Api-Key': 'Bearer no-admin-token-0' })];
    expect([admins.body.match.headers['X-Api-Key'], other.body.match.headers['X-Api-Key']]).toEqual(['Bear…XYZ', 'Bear…n-0']);
    // Nor in its path, body criteria or answer, which the view masks of the client's tokens only.
    const adminRule = (body: Record<string, unknown>) => sandbox.call('POST', '/__sandbox/faults', { token: ADMIN, headers: { 'X-Sandbox-Client': 'client-a' }, body: { action: fail400, times: 1, ...body } });
    const refusals = [
      [{ match: { path: `/v1/order/tracking/${ADMIN}` } }, 'match.path'],
      [{ match: { path: '/v1/order', body: { k: `x${ADMIN}` } } }, 'match.body.k'],
      [{ match: { path: TRACK }, action: { type: 'status', status: 400, body: { m: [ADMIN] } } }, 'action.body.m[0]'],
      [{ match: { path: TRACK }, action: { type: 'status', status: 400, headers: { 'X-E': ADMIN } } }, 'action.headers.X-E'],
      [{ match: { path: `/v1/order/tracking/${encodeURIComponent(ADMIN).replace('a', '%61')}` } }, 'match.path'],
      [{ match: { path: TRACK, headers: { [`X-${ADMIN}`]: 'v' } } }, `match.headers.X-${ADMIN}`],
      [{ match: { path: TRACK, headers: { [`x-${ADMIN.toLowerCase()}`]: 'v' } } }, `match.headers.x-${ADMIN.toLowerCase()}`],
      [{ match: { path: `/v1/order/tracking/${encodeURIComponent(ADMIN).replace('a', '%61')}%zz` } }, 'match.path'],
    ] as const;
    for (const [body, field] of refusals) expect((await adminRule(body)).body.errors, field).toEqual([{ field, message: expect.stringMatching(/holds an admin token/) }]);
    const listed = await sandbox.call('GET', '/__sandbox/faults', { token: READER });
    expect(listed.body.rules[0].match.headers).toEqual({ 'X-Partner-Credential': expect.stringMatching(/^toke…/), 'X-Trace': 'plain' });
    expect(listed.body.rules.map((r: { match: { headers: Record<string, string> } }) => r.match.headers['X-Api-Key'])).not.toContain('[an admin token]');
    expect(JSON.stringify(listed.body.rules[0])).not.toContain(TOKEN_A);
  });

  it("masks the client's tokens in a rule's path, body criteria and answer too, and matches on them as written", async () => {
    await sandbox.close();
    sandbox = await testSandbox({ clients: [{ token: PARTNER_TOKEN, id: 'client-a' }, { token: READER, id: 'client-a', role: 'read_only' }] });
    const byPath = { match: { path: `/v1/order/tracking/${PARTNER_TOKEN}` }, action: { type: 'status', status: 400, body: { success: false, message: `refused ${PARTNER_TOKEN}`, errors: [] }, headers: { 'X-Echo': PARTNER_TOKEN } }, times: 1 };
    const byBody = { match: { path: '/v1/order', body: { api_key: PARTNER_TOKEN, 'items[0].item_name': 'kept', notes: [1, { key: PARTNER_TOKEN }] } }, action: fail400, times: 1 };
    for (const rule of [byPath, byBody]) expect((await sandbox.call('POST', '/__sandbox/faults', { token: PARTNER_TOKEN, body: rule })).status).toBe(201);
    for (const token of [READER, PARTNER_TOKEN]) {
      const shown = (await sandbox.call('GET', '/__sandbox/faults', { token })).body.rules;
      expect(shown.map((r: { match: unknown }) => r.match)).toEqual([{ path: '/v1/…222' }, { path: '/v1/order', body: { api_key: 'part…222', 'items[0].item_name': 'kept', notes: [1, { key: 'part…222' }] } }]);
      expect(shown[0].action).toEqual({ type: 'status', status: 400, body: { success: false, message: 'refu…222', errors: [] }, headers: { 'X-Echo': 'part…222' } });
      expect(JSON.stringify(shown)).not.toContain(PARTNER_TOKEN);
    }
    // The stored rule is unchanged: a request to that path is faulted with the answer as written.
    const faulted = await sandbox.call('GET', `/v1/order/tracking/${PARTNER_TOKEN}`, { token: PARTNER_TOKEN });
    expect([faulted.status, faulted.body.message, faulted.headers['x-echo']]).toEqual([400, `refused ${PARTNER_TOKEN}`, PARTNER_TOKEN]);
  });

  it("leaves a read_only token's reads out of the client's rules, unless a rule names that token: an observer does not spend them", async () => {
    await sandbox.close();
    sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: READER, id: 'client-a', role: 'read_only' }] });
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { path: TRACK }, action: fail400, times: 1 } });
    expect((await sandbox.call('GET', TRACK, { token: READER })).status).toBe(404);
    expect((await sandbox.call('GET', '/__sandbox/faults')).body.rules).toMatchObject([{ matched: 0, hits: 0, remaining: 1 }]);
    expect((await sandbox.call('GET', TRACK)).status).toBe(400);

    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { headers: { Authorization: `Bearer ${READER}` }, path: TRACK }, action: fail400, times: 1 } });
    expect((await sandbox.call('GET', TRACK)).status).toBe(404);
    expect((await sandbox.call('GET', TRACK, { token: READER })).status).toBe(400);
  });
});
