import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRequest, item } from '../support/orders.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

const TRACK = '/v1/order/tracking/SBXNOSUCH01';
const journal = async (query = '', token = TOKEN_A) => (await sandbox.call('GET', `/__sandbox/requests${query}`, { token })).body;
const invalidCreate = () => createRequest(2, { items: [item(), item({ item_weight: 'heavy', receiver_phone: '12' })] });

describe('GET /__sandbox/requests', () => {
  it("lists the client's provider requests oldest first, with what was sent and answered", async () => {
    const body = createRequest(1);
    await sandbox.call('POST', '/v1/order', { body, headers: { 'X-Sandbox-Scenario': 'delivered' } });
    await sandbox.call('GET', TRACK);
    const res = await journal();
    expect(res.total).toBe(2);
    expect(res.requests).toEqual([
      expect.objectContaining({ method: 'POST', path: '/v1/order', operation_id: 'createOrder', body, status: 201, violations: [], aborted: false }),
      expect.objectContaining({ method: 'GET', path: TRACK, operation_id: 'trackOrder', body: null, status: 404, violations: [] }),
    ]);
    expect(res.requests[0].headers['x-sandbox-scenario']).toBe('delivered');
    expect(res.requests[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(res.requests[0].id).toBeLessThan(res.requests[1].id);
  });

  it('keeps the query as sent, though validation read its numbers and filled its defaults', async () => {
    expect((await sandbox.call('GET', '/v1/area/search?q=tebet&limit=5')).status).toBe(200);
    expect((await sandbox.call('GET', '/v1/area/search?q=tebet')).status).toBe(200);
    // sandbox.call checks the listing against the spec: query values are strings.
    const { requests } = await journal();
    expect(requests.map((entry: { query: unknown }) => entry.query)).toEqual([{ q: 'tebet', limit: '5' }, { q: 'tebet' }]);
  });

  it('keeps a parameter named like an object property (__proto__, constructor) as sent', async () => {
    expect((await sandbox.call('GET', '/v1/area/search?q=tebet&__proto__=x&constructor=y')).status).toBe(200);
    const [entry] = (await journal()).requests;
    // Read as entries: `{ __proto__: 'x' }` written in a test would set a prototype, not a field.
    expect(Object.entries(entry.query)).toEqual([['q', 'tebet'], ['__proto__', 'x'], ['constructor', 'y']]);
  });

  it('keeps a body up to 16 KiB whole, and of a larger one its first 16 KiB of JSON with its size', async () => {
    const small = createRequest(1);
    // A 1-item create padded past 16 KiB: the answer is a 400, the journal keeps an excerpt.
    const large = createRequest(1, { items: [item({ item_name: 'x'.repeat(40_000) })] });
    await sandbox.call('POST', '/v1/order', { body: small });
    await sandbox.call('POST', '/v1/order', { body: large });
    const [kept, cut] = (await journal()).requests;
    expect(kept.body).toEqual(small);
    expect(kept.body_truncated).toBeUndefined();
    const whole = JSON.stringify(large);
    expect(cut.body_truncated).toEqual({ bytes: Buffer.byteLength(whole) });
    expect(cut.body).toBe(whole.slice(0, 16_384));
    expect(cut.violations.length).toBeGreaterThan(0);
  });

  it('keeps each header value up to 512 characters, and of a longer one its first 512 with its length', async () => {
    await sandbox.call('GET', TRACK, { headers: { 'x-short': 'y'.repeat(512), 'x-pad': 'z'.repeat(7_000) } });
    const [entry] = (await journal()).requests;
    expect(entry.headers['x-short']).toBe('y'.repeat(512));
    expect(entry.headers['x-pad']).toBe(`${'z'.repeat(512)}… (7000 characters)`);
  });

  it('keeps at most 64 headers and 64 query parameters of a request, and says how many more there were', async () => {
    // 1,000 entries of 2,000 tiny headers, or of 1,400 parameters, held 70-80 MB of one client's memory.
    const headers = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`x-h${i}`, 'v']));
    const query = Array.from({ length: 200 }, (_, i) => `p${i}=${i === 0 ? 'q'.repeat(600) : 'v'}`).join('&');
    await sandbox.call('GET', `${TRACK}?${query}`, { headers });
    const [entry] = (await journal()).requests;
    expect(Object.keys(entry.headers)).toHaveLength(65);
    expect(JSON.stringify(entry.headers)).not.toContain(TOKEN_A);
    expect(entry.headers['…']).toMatch(/^\d+ more not kept$/);
    expect(Object.keys(entry.query)).toHaveLength(65);
    expect(entry.query.p0).toBe(`${'q'.repeat(512)}… (600 characters)`);
    expect(entry.query['…']).toBe('136 more not kept');
  });

  it('redacts the bearer token', async () => {
    await sandbox.call('GET', TRACK);
    const res = await journal();
    expect(res.requests[0].headers.authorization).toBe('[redacted]');
    expect(JSON.stringify(res)).not.toContain(TOKEN_A);
  });

  it('redacts every credential header: cookies and API keys as well as the bearer token', async () => {
    await sandbox.call('GET', TRACK, { headers: { Cookie: 'session=partner-session-123', 'X-Api-Key': 'partner-live-key-123' } });
    const [entry] = (await journal()).requests;
    expect([entry.headers.cookie, entry.headers['x-api-key']]).toEqual(['[redacted]', '[redacted]']);
    expect(JSON.stringify(entry)).not.toMatch(/partner-session-123|partner-live-key-123/);
  });

  it('redacts a token of one-byte characters beyond ASCII however the request repeats its bytes: in a header, read as UTF-8, or a query', async () => {
    await sandbox.close();
    // Configured as Node reads the bytes C3 A9 (Latin-1: Ã©); a client sends them, which UTF-8 reads as é.
    const token = 'tok\u00c3\u00a9n_9876543';
    const typed = 'tokén_9876543';
    sandbox = await testSandbox({ clients: [{ token, id: 'client-a' }, { token: 'read-only-token-a', id: 'client-a', role: 'read_only' }] });
    const bytes = Buffer.from(typed, 'utf8').toString('latin1');
    const res = await sandbox.call('GET', `${TRACK}?note=${encodeURIComponent(typed)}`, { token: bytes, headers: { 'X-Debug-Token': bytes, 'X-Forwarded-Token': `prefix ${bytes}` } });
    expect(res.status).toBe(404);
    const [entry] = (await journal('', 'read-only-token-a')).requests;
    expect([entry.headers['x-debug-token'], entry.headers['x-forwarded-token'], entry.query.note]).toEqual(['[redacted]', '[redacted]', '[redacted]']);
    expect(JSON.stringify(entry)).not.toMatch(/tok(é|Ã©)n_9876543/);
  });

  it('redacts the tokens its caller may hold wherever a request repeats them (a forwarded header, a header of its own, a query value or name), so a read-only token never reads a partner one, and no caller learns a guess holds a token above its own', async () => {
    await sandbox.close();
    const [readOnly, second, admin] = ['read-only-token-a', 'Second-Writer-A1', 'admin-secret-token-XYZ'];
    sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: second, id: 'client-a' }, { token: readOnly, id: 'client-a', role: 'read_only' }, { token: TOKEN_B, id: 'client-b' }], adminTokens: [admin] });
    await sandbox.call('GET', `${TRACK}?access_token=${TOKEN_A}&page=1&${second}=&x${TOKEN_A}=`, {
      headers: { 'X-Forwarded-Authorization': `Bearer ${TOKEN_A}`, 'X-Auth-Token': 'gateway-key-123', 'X-Partner-Credential': `token=${TOKEN_A}`, 'X-Original-Token': second, [`X-${second}`]: '1', 'X-Guess': `a|${admin}|b`, 'X-Trace': 'kept-as-sent' },
    });
    const [entry] = (await journal('', readOnly)).requests;
    for (const name of ['x-forwarded-authorization', 'x-auth-token', 'x-partner-credential', 'x-original-token']) expect(entry.headers[name], name).toBe('[redacted]');
    expect(Object.keys(entry.headers).some((name) => name.includes(second.toLowerCase()))).toBe(false);
    expect(entry.query).toEqual({ access_token: '[redacted]', page: '1', '[redacted] 3': '', '[redacted] 4': '' });
    expect(entry.headers['x-trace']).toBe('kept-as-sent');
    // A partner's request holding an admin token is kept as sent: hiding it would tell the partner its guess is one.
    expect(entry.headers['x-guess']).toBe(`a|${admin}|b`);
    expect(JSON.stringify(entry)).not.toMatch(new RegExp(`${TOKEN_A}|${second}|gateway-key-123`, 'i'));
    // A read-only token's request hides its own token only; an admin's (acting for the client), admin tokens too.
    await sandbox.call('GET', TRACK, { token: readOnly, headers: { 'X-Mine': readOnly, 'X-Guess': TOKEN_A } });
    await sandbox.call('GET', TRACK, { token: admin, headers: { 'X-Sandbox-Client': 'client-a', 'X-Gateway-Key': admin, 'X-Partner': TOKEN_A } });
    const [byReader, byAdmin] = (await journal('', readOnly)).requests.slice(1);
    expect([byReader.headers['x-mine'], byReader.headers['x-guess']]).toEqual(['[redacted]', TOKEN_A]);
    expect([byAdmin.headers['x-gateway-key'], byAdmin.headers['x-partner']]).toEqual(['[redacted]', '[redacted]']);
    // Another client's token is no secret of this client's: a request cannot carry it without having it.
    await sandbox.call('GET', TRACK, { headers: { 'X-Note': TOKEN_B } });
    expect((await journal('', readOnly)).requests[3].headers['x-note']).toBe(TOKEN_B);
  });

  it("redacts those tokens in the body and the path too: a client's field holding its own token is no read for its read-only token", async () => {
    await sandbox.close();
    const readOnly = 'read-only-token-a';
    sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: readOnly, id: 'client-a', role: 'read_only' }] });
    const withToken = { ...createRequest(1), api_key: TOKEN_A, notes: [`key ${TOKEN_A}`, 'kept'], [`x${TOKEN_A}`]: 1 };
    await sandbox.call('POST', '/v1/order', { body: withToken });
    // Past 16 KiB the journal keeps an excerpt: the token is redacted before the cut, which falls inside it here, so no part of it is left.
    const before = `{"pad":"${'x'.repeat(16_384 - 4 - 17)}","key":"`;
    const cutInToken = `${before}${TOKEN_A}","more":"${'y'.repeat(1_000)}"}`;
    expect(Buffer.byteLength(before)).toBe(16_384 - 4);
    await sandbox.call('POST', '/v1/order', { body: cutInToken, headers: { 'Content-Type': 'application/json' } });
    await sandbox.call('GET', `/v1/order/tracking/${TOKEN_A}`);
    const [create, excerpt, track] = (await journal('', readOnly)).requests;
    expect(create.body.api_key).toBe('[redacted]');
    expect(create.body.notes).toEqual(['[redacted]', 'kept']);
    expect(create.body.items).toEqual(withToken.items);
    expect(Object.keys(create.body)).toContain(`[redacted] ${Object.keys(withToken).length}`);
    expect(excerpt.body_truncated.bytes).toBe(Buffer.byteLength(cutInToken));
    expect(excerpt.body).toBe(`${before}[red`);
    expect(track.path).toBe('/v1/order/tracking/[redacted]');
    for (const entry of [create, excerpt, track]) expect(JSON.stringify(entry)).not.toContain(TOKEN_A.slice(0, 8));
    // The readiness report's events, which the read-only token reads too, show the path so, and a create's order code.
    await sandbox.call('POST', '/v1/order', { body: createRequest(1, { items: [item({ order_code: TOKEN_A })] }) });
    const report = JSON.stringify((await sandbox.call('GET', '/__sandbox/report', { token: readOnly })).body);
    expect(report).toContain('GET /v1/order/tracking/[redacted] → 404');
    expect(report).toContain(JSON.stringify('POST /v1/order (order code "[redacted]") → 201'));
    expect(report).not.toContain(TOKEN_A);
    // A body without a token is kept as sent, field for field.
    await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    expect((await journal('', readOnly)).requests[4].body).toEqual(createRequest(1));
  });

  it('finds a token in a body however JSON writes it (escaped, or a number) and in a path percent-encoded', async () => {
    await sandbox.close();
    const [quoted, numeric, readOnly] = ['tok"en/with+plus=', '1234567890123', 'read-only-token-a'];
    sandbox = await testSandbox({ clients: [{ token: quoted, id: 'client-a' }, { token: numeric, id: 'client-a' }, { token: readOnly, id: 'client-a', role: 'read_only' }] });
    const body = { ...createRequest(1), key: quoted, pin: Number(numeric), [`k${quoted}`]: 1 };
    await sandbox.call('POST', '/v1/order', { token: quoted, body });
    await sandbox.call('GET', `/v1/order/tracking/${encodeURIComponent(quoted)}`, { token: quoted });
    // Past 16 KiB, the excerpt's JSON text holds the token escaped.
    await sandbox.call('POST', '/v1/order', { token: quoted, body: { key: quoted, pad: 'x'.repeat(20_000) } });
    const [create, track, large] = (await journal('', readOnly)).requests;
    expect([create.body.key, create.body.pin]).toEqual(['[redacted]', '[redacted]']);
    expect(Object.keys(create.body)).toContain(`[redacted] ${Object.keys(body).length}`);
    expect(track.path).toBe('/v1/order/tracking/[redacted]');
    expect(large.body).toMatch(/^\{"key":"\[redacted\]","pad":"x/);
    const shown = JSON.stringify([create, track, large]);
    for (const form of [quoted, JSON.stringify(quoted).slice(1, -1), encodeURIComponent(quoted), numeric]) expect(shown).not.toContain(form);
    // Percent-escapes in lower case, or only some of them; a body escaping `/` as `\/` (PHP's json_encode does).
    await sandbox.call('GET', `/v1/order/tracking/${encodeURIComponent(quoted).toLowerCase()}`, { token: quoted });
    await sandbox.call('GET', `/v1/order/tracking/tok%22en%2Fwith+plus%3D`, { token: quoted });
    await sandbox.call('POST', '/v1/order', { token: quoted, body: `{"key":${JSON.stringify(quoted).replace('/', '\\/')}}`, headers: { 'Content-Type': 'application/json' } });
    // A malformed escape beside it, or the token twice in two forms, hides nothing.
    await sandbox.call('GET', `/v1/order/tracking/${encodeURIComponent(quoted).toLowerCase()}%zz`, { token: quoted });
    await sandbox.call('GET', `/v1/order/tracking/${encodeURIComponent(quoted)}${encodeURIComponent(quoted).toLowerCase()}`, { token: quoted });
    // A run of escapes that is no UTF-8 (`%3D%FF`): its ASCII escapes still read.
    await sandbox.call('GET', `/v1/order/tracking/${encodeURIComponent(quoted).toLowerCase()}%FF`, { token: quoted });
    const [lower, mixed, escaped, malformed, twice, invalid] = (await journal('', readOnly)).requests.slice(3);
    expect([lower.path, mixed.path, escaped.body]).toEqual(['/v1/order/tracking/[redacted]', '/v1/order/tracking/[redacted]', { key: '[redacted]' }]);
    expect([malformed.path, twice.path, invalid.path]).toEqual(['/v1/order/tracking/[redacted]%zz', '/v1/order/tracking/[redacted][redacted]', '/v1/order/tracking/[redacted]%FF']);
  });

  it("cuts a long body's excerpt past every token redacted in it, however much redaction shortened it", async () => {
    await sandbox.close();
    const [long, readOnly] = [`partner-token-${'a'.repeat(26)}`, 'read-only-token-a'];
    sandbox = await testSandbox({ clients: [{ token: long, id: 'client-a' }, { token: readOnly, id: 'client-a', role: 'read_only' }] });
    // Two tokens early shorten the text by 60 bytes; a third begins 10 bytes past the excerpt's 16 KiB.
    const start = `{"a":"${long}","b":"${long}","pad":"`;
    const body = `${start}${'x'.repeat(16_384 + 10 - Buffer.byteLength(start) - 9)}","key":"${long}","more":"${'y'.repeat(500)}"}`;
    expect(body.indexOf(long, start.length)).toBe(16_384 + 10);
    await sandbox.call('POST', '/v1/order', { token: long, body, headers: { 'Content-Type': 'application/json' } });
    const [entry] = (await journal('', readOnly)).requests;
    expect(Buffer.byteLength(entry.body)).toBe(16_384);
    expect(entry.body).not.toContain('partner-token');
    expect(entry.body).toMatch(/"key":"\[redacted\]","more":"y+$/);
  });

  it('lists the spec violations of an invalid request', async () => {
    await sandbox.call('POST', '/v1/order', { body: invalidCreate() });
    const [entry] = (await journal()).requests;
    expect(entry.status).toBe(400);
    expect(entry.violations).toEqual([
      { field: 'items[1].receiver_phone', message: expect.stringContaining('phone number') },
      { field: 'items[1].item_weight', message: expect.stringContaining('numeric text') },
    ]);
  });

  it('lists the violations of the sandbox rules beyond the schema too', async () => {
    await sandbox.call('POST', '/v1/order', { body: createRequest(1, { courier_code: 'dhl' }) });
    expect((await journal()).requests[0].violations).toEqual([{ field: 'courier_code', message: expect.any(String) }]);
  });

  it('keeps at most --journal-size entries per client, dropping the oldest', async () => {
    await sandbox.close();
    sandbox = await testSandbox({ journalSize: 3 });
    for (let i = 1; i <= 5; i++) await sandbox.call('GET', `/v1/order/tracking/SBXNOSUCH${i}`);
    await sandbox.call('GET', TRACK, { token: TOKEN_B });
    const res = await journal();
    expect(res.size).toBe(3);
    expect(res.requests.map((e: { path: string }) => e.path)).toEqual(['/v1/order/tracking/SBXNOSUCH3', '/v1/order/tracking/SBXNOSUCH4', '/v1/order/tracking/SBXNOSUCH5']);
    expect((await journal('', TOKEN_B)).total).toBe(1);
  });

  it('filters by operation, status and time', async () => {
    await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const middle = new Date(sandbox.services.clock.now() + 30_000).toISOString();
    await sandbox.advance(60_000);
    await sandbox.call('GET', TRACK);
    await sandbox.call('POST', '/v1/order', { body: invalidCreate() });
    const ops = async (query: string) => (await journal(query)).requests.map((e: { operation_id: string; status: number }) => `${e.operation_id} ${e.status}`);
    expect(await ops('?operation_id=createOrder')).toEqual(['createOrder 201', 'createOrder 400']);
    expect(await ops('?status=404')).toEqual(['trackOrder 404']);
    expect(await ops(`?since=${middle}`)).toEqual(['trackOrder 404', 'createOrder 400']);
    expect(await ops(`?until=${middle}`)).toEqual(['createOrder 201']);
    expect(await ops(`?operation_id=createOrder&since=${middle}`)).toEqual(['createOrder 400']);
  });

  it('answers only the newest limit entries, oldest first, with total counting them all', async () => {
    for (let i = 0; i < 3; i += 1) await sandbox.call('GET', TRACK);
    const res = await sandbox.call('GET', '/__sandbox/requests?limit=2');
    expect(res.body.total).toBe(3);
    expect(res.body.requests).toHaveLength(2);
    expect(res.body.requests[0].id).toBeLessThan(res.body.requests[1].id);
    expect((await sandbox.call('GET', '/__sandbox/requests?limit=0')).status).toBe(400);
  });

  it('writes a journal of more than 64 KiB in parts, the same JSON as in one piece', async () => {
    const large = createRequest(1, { items: [item({ item_name: 'x'.repeat(40_000) })] });
    for (let i = 0; i < 12; i += 1) await sandbox.call('POST', '/v1/order', { body: large });
    await sandbox.call('GET', TRACK);
    const whole = await sandbox.call('GET', '/__sandbox/requests');
    expect(whole.headers['transfer-encoding']).toBe('chunked');
    expect(whole.headers['content-type']).toMatch(/^application\/json/);
    expect(whole.body.total).toBe(13);
    expect(whole.body.requests).toHaveLength(13);
    expect(whole.body.requests.slice(0, 12).every((entry: { body_truncated?: unknown }) => entry.body_truncated !== undefined)).toBe(true);
    expect(whole.body.requests[12]).toMatchObject({ operation_id: 'trackOrder', status: 404 });
    const newest = await sandbox.call('GET', '/__sandbox/requests?limit=1');
    expect(newest.headers['content-length']).toBeDefined();
    expect(newest.body).toEqual({ total: 13, size: 1000, requests: [whole.body.requests[12]] });
  });

  it('returns 400 naming the parameter for a time that is not one', async () => {
    const res = await sandbox.call('GET', '/__sandbox/requests?since=yesterday');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toContain('since');
    // A leap second passes the date-time format but is no time Date can read.
    const leap = await sandbox.call('GET', '/__sandbox/requests?until=9999-12-31T23:59:60Z');
    expect(leap.status).toBe(400);
    expect(leap.body.errors[0].field).toBe('until');
  });

  it("shows only the calling client's requests", async () => {
    await sandbox.call('GET', TRACK, { token: TOKEN_B });
    expect((await journal()).requests).toEqual([]);
    expect((await journal('', TOKEN_B)).total).toBe(1);
  });

  it('does not journal requests that fail authentication, nor control requests', async () => {
    await sandbox.call('GET', TRACK, { token: 'not-a-token' });
    await sandbox.call('GET', '/__sandbox/orders');
    expect((await journal()).requests).toEqual([]);
  });

  it('journals a Prefer answer with the status it got', async () => {
    await sandbox.call('GET', TRACK, { headers: { Prefer: 'code=400' } });
    const [entry] = (await journal()).requests;
    expect(entry).toMatchObject({ status: 400, violations: [], headers: { prefer: 'code=400' } });
  });

  it('journals a reset connection with no status, as aborted', async () => {
    await sandbox.call('POST', '/__sandbox/faults', { body: { action: { type: 'reset' } } });
    await expect(sandbox.call('GET', TRACK)).rejects.toThrow();
    const [entry] = (await journal()).requests;
    expect(entry).toMatchObject({ operation_id: 'trackOrder', status: null, aborted: true });
  });
});

describe('DELETE /__sandbox/requests', () => {
  it("clears the client's journal and no other", async () => {
    await sandbox.call('GET', TRACK);
    await sandbox.call('GET', TRACK, { token: TOKEN_B });
    expect((await sandbox.call('DELETE', '/__sandbox/requests')).body).toEqual({ success: true, removed: 1 });
    expect((await journal()).requests).toEqual([]);
    expect((await journal('', TOKEN_B)).total).toBe(1);
  });

  it('is done by POST /__sandbox/reset too', async () => {
    await sandbox.call('GET', TRACK);
    const res = await sandbox.call('POST', '/__sandbox/reset');
    expect(res.body.removed.requests).toBe(1);
    expect((await journal()).requests).toEqual([]);
  });
});

describe('--strict', () => {
  it('logs one warning line naming each offending field of a request', async () => {
    await sandbox.close();
    sandbox = await testSandbox({ strict: true });
    const warn = vi.spyOn(sandbox.services.logger, 'warn');
    await sandbox.call('POST', '/v1/order', { body: invalidCreate() });
    await sandbox.call('GET', TRACK);
    const lines = warn.mock.calls.map((call) => String(call[1]));
    expect(lines).toEqual([expect.stringContaining('items[1].receiver_phone'), expect.stringContaining('items[1].item_weight')]);
    expect(warn.mock.calls[0]![0]).toMatchObject({ client: 'client-a', op: 'createOrder', field: 'items[1].receiver_phone' });
  });

  it('logs nothing without --strict', async () => {
    const warn = vi.spyOn(sandbox.services.logger, 'warn');
    await sandbox.call('POST', '/v1/order', { body: invalidCreate() });
    expect(warn).not.toHaveBeenCalled();
  });
});
