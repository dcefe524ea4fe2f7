import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';
import { PINGS_KEPT } from '../../src/webhooks/manual.js';
import { Receiver } from './receiver.js';
import { createOrders, deliveries, startWebhookSandbox, stopWebhookSandbox, webhookSandbox } from './support.js';

let receiver: Receiver;
let sandbox: TestSandbox;
beforeEach(async () => ({ receiver, sandbox } = await startWebhookSandbox()));
afterEach(() => stopWebhookSandbox(sandbox, receiver));

describe('GET /__sandbox/webhook', () => {
  it('shows the URL from the config file, a generated secret and the enabled state', async () => {
    const res = await sandbox.call('GET', '/__sandbox/webhook');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ url: receiver.url, source: 'config', state: 'enabled', enabled: true, chaos: [], timeout_ms: 10_000 });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  });

  it('shows no URL for a client without one, and a secret of its own', async () => {
    const a = await sandbox.call('GET', '/__sandbox/webhook');
    const b = await sandbox.call('GET', '/__sandbox/webhook', { token: TOKEN_B });
    expect(b.body).toMatchObject({ url: null, state: 'no_url', enabled: false, source: 'none' });
    expect(b.body.secret).not.toBe(a.body.secret);
  });

  it('gives the same generated secret under the same seed, and keeps it across a reset', async () => {
    const first = (await sandbox.call('GET', '/__sandbox/webhook')).body.secret;
    await sandbox.call('POST', '/__sandbox/reset');
    expect((await sandbox.call('GET', '/__sandbox/webhook')).body.secret).toBe(first);
    await sandbox.close();
    sandbox = await webhookSandbox(receiver.url);
    expect((await sandbox.call('GET', '/__sandbox/webhook')).body.secret).toBe(first);
  });
});

describe('PUT /__sandbox/webhook', () => {
  it('sets the URL and secret for the calling client only', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const res = await sandbox.call('PUT', '/__sandbox/webhook', { token: TOKEN_B, body: { url: receiver.url, secret } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ url: receiver.url, secret, source: 'runtime', state: 'enabled', events: null });
    await createOrders(sandbox, 1, {}, TOKEN_B);
    await sandbox.advance(60_000);
    expect(new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>)).toMatchObject({ event: 'awb.generated' });
    expect((await sandbox.call('GET', '/__sandbox/webhook')).body.source).toBe('config');
  });

  it.each([
    [{ url: 'not a url' }, 'url'],
    [{ url: 'ftp://example.com/x' }, 'url'],
    [{}, 'url'],
    [{ url: 'http://127.0.0.1/x', secret: 'whsec_c2hvcnQ=' }, 'secret'],
    [{ url: 'http://127.0.0.1/x', secret: 'plain' }, 'secret'],
    [{ url: 'http://127.0.0.1/x', secret: 'whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw' }, 'secret'],
    [{ url: 'http://127.0.0.1/x', chaos: ['explode'] }, 'chaos[0]'],
  ])('returns 400 naming the field for %j', async (body, field) => {
    const res = await sandbox.call('PUT', '/__sandbox/webhook', { body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it.each(['whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw', 'whsec_c2hvcnQ=', 'whsec_ a b', 'plain'])('says what a secret must be for %j, not a pattern', async (secret) => {
    const res = await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: 'http://127.0.0.1/x', secret } });
    expect([res.status, res.body.errors]).toEqual([400, [{ field: 'secret', message: 'must be "whsec_" followed by the standard base64 of 24 to 64 bytes, with its "=" padding' }]]);
  });
});

describe('GET /__sandbox/webhooks/deliveries', () => {
  it('lists the client deliveries newest first, filtered by order and status', async () => {
    receiver.respond = (w) => ({ status: w.json.order_code === 'INV-2' ? 500 : 200 });
    const orders = await createOrders(sandbox, 3);
    await sandbox.advance(60_000);
    const all = await sandbox.call('GET', '/__sandbox/webhooks/deliveries');
    expect(all.body.total).toBe(3);
    expect(all.body.deliveries.map((d: { order_no: string }) => d.order_no)).toEqual([...orders].reverse());
    const one = await sandbox.call('GET', `/__sandbox/webhooks/deliveries?order_no=${orders[1]}`);
    expect(one.body.deliveries).toHaveLength(1);
    expect(one.body.deliveries[0]).toMatchObject({ order_no: orders[1], status: 'pending', event: 'awb.generated' });
    const pending = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=pending');
    expect(pending.body.deliveries.map((d: { order_no: string }) => d.order_no)).toEqual([orders[1]]);
    const limited = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?limit=1');
    expect(limited.body).toMatchObject({ total: 3, deliveries: [expect.objectContaining({ order_no: orders[2] })] });
  });

  it('writes a page of more than 64 KiB in parts, the same JSON as in one piece', async () => {
    // A receiver answering 1 KiB of NULs: each attempt keeps at most 1 KiB of JSON of it (it was 6 KiB of \u0000 escapes).
    receiver.respond = () => ({ status: 500, body: '\u0000'.repeat(1024) });
    await createOrders(sandbox, 40);
    await sandbox.advance(60_000);
    for (let i = 0; i < 3; i++) await sandbox.advance(3_600_000);
    const whole = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?limit=100');
    expect(whole.headers['transfer-encoding']).toBe('chunked');
    expect(whole.body.total).toBe(40);
    expect(whole.body.deliveries).toHaveLength(40);
    for (const delivery of whole.body.deliveries) {
      expect(delivery.attempts.length).toBeGreaterThan(1);
      for (const attempt of delivery.attempts) expect(Buffer.byteLength(JSON.stringify(attempt.response_body))).toBeLessThanOrEqual(1026);
    }
    const one = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?limit=1');
    expect(one.headers['content-length']).toBeDefined();
    expect(one.body.deliveries).toEqual([whole.body.deliveries[0]]);
  });

  it("pages with a cursor that tells nothing of other clients' deliveries (they share a sequence), and refuses one it did not seal", async () => {
    const cursorOf = async () => (await sandbox.call('GET', '/__sandbox/webhooks/deliveries?limit=1', { token: TOKEN_B })).body.next_cursor as string;
    await createOrders(sandbox, 2, {}, TOKEN_B);
    await sandbox.advance(60_000);
    const before = await cursorOf();
    // Client A's webhooks in between: B's next cursor must not count them.
    await createOrders(sandbox, 5);
    await sandbox.advance(60_000);
    await createOrders(sandbox, 1, {}, TOKEN_B);
    await sandbox.advance(60_000);
    const after = await cursorOf();
    for (const cursor of [before, after]) expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toMatch(/\d+:msg_/);
    // Nor by its length: the sequence number's digits do not show in it.
    expect(after.length).toBe(before.length);
    // The pages still follow on, newest first, each delivery once.
    const first = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?limit=2', { token: TOKEN_B });
    const second = await sandbox.call('GET', `/__sandbox/webhooks/deliveries?limit=2&cursor=${first.body.next_cursor}`, { token: TOKEN_B });
    const whole = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?limit=100', { token: TOKEN_B });
    expect(whole.body.deliveries).toHaveLength(3);
    expect([...first.body.deliveries, ...second.body.deliveries].map((d: { id: string }) => d.id)).toEqual(whole.body.deliveries.map((d: { id: string }) => d.id));
    expect(second.body.next_cursor).toBeNull();
    // A cursor written by hand (a sequence number and an id) is refused, naming cursor.
    const forged = await sandbox.call('GET', `/__sandbox/webhooks/deliveries?cursor=${Buffer.from(`1:${first.body.deliveries[0].id}`).toString('base64url')}`, { token: TOKEN_B });
    expect(forged.status).toBe(400);
    expect(forged.body.errors).toEqual([{ field: 'cursor', message: 'is not a cursor of this listing: pass the next_cursor of the previous page' }]);
    // Nor does B's cursor page A's listing from B's place in the shared sequence.
    const borrowed = await sandbox.call('GET', `/__sandbox/webhooks/deliveries?limit=2&cursor=${first.body.next_cursor}`);
    expect(borrowed.status).toBe(400);
    expect(borrowed.body.errors).toEqual([{ field: 'cursor', message: 'is not a cursor of this listing: pass the next_cursor of the previous page' }]);
  });

  it('returns 400 naming status when it is not a delivery status', async () => {
    const res = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=lost');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('status');
  });

  it('keeps deliveries even without a URL, paused until one is set', async () => {
    await createOrders(sandbox, 1, {}, TOKEN_B);
    await sandbox.advance(60_000);
    const [paused] = await deliveries(sandbox, '', TOKEN_B);
    expect(paused).toMatchObject({ status: 'paused', last_error: expect.stringContaining('no webhook URL') });
    await sandbox.call('PUT', '/__sandbox/webhook', { token: TOKEN_B, body: { url: receiver.url } });
    await sandbox.advance(0);
    expect(receiver.received.map((r) => r.id)).toEqual([paused!.id]);
  });
});

describe('many paused deliveries', () => {
  const dir = tempDir();

  it('are not looked for when the client has none: setting the URL again reads none of its deliveries', async () => {
    await createOrders(sandbox, 20);
    await sandbox.advance(60_000);
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=paused&limit=1')).body.total).toBe(0);
    // Every listing of the store's deliveries, inside a unit of work or not (a client's listing reads all of its deliveries).
    const repository = await sandbox.services.storage.transaction(async (tx) => Object.getPrototypeOf(tx.deliveries) as { list: () => unknown });
    const lists = vi.spyOn(repository, 'list');
    expect((await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } })).status).toBe(200);
    expect(lists).not.toHaveBeenCalled();
    lists.mockRestore();
  });

  it('are all made due when a URL is set, a slice at a time, and sent', async () => {
    for (let i = 0; i < 5; i += 1) await createOrders(sandbox, 90, {}, TOKEN_B);
    await sandbox.advance(60_000);
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=paused&limit=1', { token: TOKEN_B })).body.total).toBe(450);
    const units = vi.spyOn(sandbox.services.storage, 'transaction');
    const put = await sandbox.call('PUT', '/__sandbox/webhook', { token: TOKEN_B, body: { url: receiver.url } });
    expect(put.status).toBe(200);
    // 200 a unit of work (the endpoint with the first 200, then 200 and the last 50), not all 450 in one.
    expect(units.mock.calls.length).toBeGreaterThanOrEqual(3);
    units.mockRestore();
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=paused&limit=1', { token: TOKEN_B })).body.total).toBe(0);
    await sandbox.advance(0);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(450);
  });

  it('left paused while the endpoint takes them (a stop in the middle of resuming) are made due at the next start', async () => {
    const data = join(dir(), 'paused.json');
    const first = await testSandbox({ data, clients: [{ token: TOKEN_B, id: 'client-b' }] });
    await createOrders(first, 3, {}, TOKEN_B);
    await first.advance(60_000);
    await first.close();
    const second = await testSandbox({ data, clients: [{ token: TOKEN_B, id: 'client-b', webhook: { url: receiver.url } }] });
    try {
      await second.advance(0);
      expect(receiver.received).toHaveLength(3);
      expect((await second.call('GET', '/__sandbox/webhooks/deliveries?status=delivered', { token: TOKEN_B })).body.total).toBe(3);
    } finally {
      await second.close();
    }
  });
});

describe('GET /__sandbox/webhooks/deliveries/{id}', () => {
  it('shows the delivery with its payload and attempts', async () => {
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    const [listed] = await deliveries(sandbox);
    const res = await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${listed!.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(listed);
    expect(res.body.payload).toEqual(receiver.received[0]!.json);
  });

  it('answers 404 to another client, exactly as for an unknown id', async () => {
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    const [mine] = await deliveries(sandbox);
    const other = await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${mine!.id}`, { token: TOKEN_B });
    const unknown = await sandbox.call('GET', '/__sandbox/webhooks/deliveries/msg_000000000000');
    expect(other.status).toBe(404);
    // The same answer but for the id it names: nothing tells that the delivery exists.
    expect(JSON.stringify(other.body).replace(mine!.id, 'ID')).toBe(JSON.stringify(unknown.body).replace('msg_000000000000', 'ID'));
    expect((await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${mine!.id}/redeliver`, { token: TOKEN_B })).status).toBe(404);
    expect((await deliveries(sandbox, '', TOKEN_B))).toEqual([]);
  });
});

describe('POST /__sandbox/webhooks/deliveries/{id}/redeliver', () => {
  it('sends the same webhook-id and body again now and logs the attempt as a redeliver', async () => {
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    const [delivery] = await deliveries(sandbox);
    const res = await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${delivery!.id}/redeliver`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('delivered');
    expect(res.body.attempts.map((a: { trigger: string; status_code: number }) => [a.trigger, a.status_code])).toEqual([
      ['schedule', 200],
      ['redeliver', 200],
    ]);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.id).toBe(receiver.received[0]!.id);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
  });

  it('refuses a redelivery with 409 once the delivery has had 50 attempts, so its log stays bounded; another delivery still takes one', async () => {
    await createOrders(sandbox, 2);
    await sandbox.advance(60_000);
    const [first, second] = await deliveries(sandbox);
    for (let i = 1; i < 50; i += 1) expect((await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${first!.id}/redeliver`)).status).toBe(200);
    const refused = await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${first!.id}/redeliver`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/has had 50 attempts, the most one may have with redeliveries/);
    expect((await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${first!.id}`)).body.attempts).toHaveLength(50);
    expect(receiver.received.filter((r) => r.id === first!.id)).toHaveLength(50);
    expect((await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${second!.id}/redeliver`)).status).toBe(200);
  });

  it('delivers a pending delivery at once and cancels its retry', async () => {
    receiver.respond = (_, i) => ({ status: i === 0 ? 500 : 200 });
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    const [delivery] = await deliveries(sandbox);
    const res = await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${delivery!.id}/redeliver`);
    expect(res.body).toMatchObject({ status: 'delivered', next_attempt_at: null });
    await sandbox.advance(3_600_000);
    expect(receiver.received).toHaveLength(2);
  });

  it('returns 409 when the client has no webhook URL', async () => {
    await createOrders(sandbox, 1, {}, TOKEN_B);
    await sandbox.advance(60_000);
    const [delivery] = await deliveries(sandbox, '', TOKEN_B);
    const res = await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${delivery!.id}/redeliver`, { token: TOKEN_B });
    expect(res.status).toBe(409);
    expect(res.body.message).toContain('PUT /__sandbox/webhook');
  });
});

describe('POST /__sandbox/webhooks/test', () => {
  it('sends a signed ping now and logs it as a delivery', async () => {
    const secret = (await sandbox.call('GET', '/__sandbox/webhook')).body.secret;
    const res = await sandbox.call('POST', '/__sandbox/webhooks/test');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ event: 'ping', order_no: null, status: 'delivered', attempts: [expect.objectContaining({ trigger: 'test', status_code: 200 })] });
    const ping = receiver.received[0]!;
    expect(ping.id).toBe(res.body.id);
    expect(new Webhook(secret).verify(ping.body, ping.headers as Record<string, string>)).toEqual({
      event: 'ping',
      client_id: 'client-a',
      message: expect.any(String),
      sent_at: expect.any(Number),
    });
    expect((await deliveries(sandbox, '&event=ping')).map((d) => d.id)).toEqual([res.body.id]);
  });

  it(`keeps a client's newest ${PINGS_KEPT} pings, so pinging without end does not grow the sandbox`, async () => {
    receiver.respond = () => ({ status: 500, body: 'x'.repeat(1_000) });
    const made: string[] = [];
    for (let i = 0; i < PINGS_KEPT + 5; i++) made.push((await sandbox.call('POST', '/__sandbox/webhooks/test')).body.id as string);
    const kept = (await sandbox.call('GET', `/__sandbox/webhooks/deliveries?event=ping&limit=200`)).body;
    expect(kept.total).toBe(PINGS_KEPT);
    expect(kept.deliveries.map((d: { id: string }) => d.id)).toEqual(made.slice(5).reverse());
    // The order's deliveries are not counted with them.
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    expect((await deliveries(sandbox, '&event=awb.generated')).length).toBe(1);
  });

  it('answers 404 to a redelivery of a ping that newer pings removed while it was on its way', async () => {
    const first = (await sandbox.call('POST', '/__sandbox/webhooks/test')).body.id as string;
    for (let i = 1; i < PINGS_KEPT; i++) await sandbox.call('POST', '/__sandbox/webhooks/test');
    // The redelivery's answer is held until a newer ping has been made (and has removed the first).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    receiver.respond = (webhook, i) => (webhook.id === first && i >= PINGS_KEPT ? { status: 200, after: released } : { status: 200 });
    const redelivery = sandbox.call('POST', `/__sandbox/webhooks/deliveries/${first}/redeliver`);
    await vi.waitFor(() => expect(receiver.byId(first)).toHaveLength(2), { timeout: 10_000 });
    await sandbox.call('POST', '/__sandbox/webhooks/test');
    release();
    expect((await redelivery).status).toBe(404);
    expect((await sandbox.call('GET', `/__sandbox/webhooks/deliveries/${first}`)).status).toBe(404);
  });

  it('reports a failing receiver in the answer, without retrying', async () => {
    receiver.respond = () => ({ status: 500, body: 'x'.repeat(5000) });
    const res = await sandbox.call('POST', '/__sandbox/webhooks/test');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('failed');
    expect(res.body.attempts[0].status_code).toBe(500);
    expect(res.body.attempts[0].response_body).toHaveLength(1024);
    await sandbox.advance(86_400_000);
    expect(receiver.received).toHaveLength(1);
  });

  it('answers 409 for a disabled endpoint, as a redelivery does, and sends nothing until it is enabled again', async () => {
    expect((await sandbox.call('PATCH', '/__sandbox/webhooks/endpoints/default', { body: { enabled: false } })).status).toBe(200);
    const refused = await sandbox.call('POST', '/__sandbox/webhooks/test');
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/The webhook endpoint of this client is disabled/);
    expect(receiver.received).toHaveLength(0);
    expect(await deliveries(sandbox, '&event=ping')).toEqual([]);
    expect((await sandbox.call('PATCH', '/__sandbox/webhooks/endpoints/default', { body: { enabled: true } })).status).toBe(200);
    expect((await sandbox.call('POST', '/__sandbox/webhooks/test')).body.status).toBe('delivered');
    expect(receiver.received).toHaveLength(1);
  });

  it('lets a client have 8 pings and redeliveries in flight at once: a 9th answers 429 with Retry-After, and another client is not held up', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    const pings = Array.from({ length: 8 }, () => sandbox.call('POST', '/__sandbox/webhooks/test'));
    await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(8);
    const ninth = await sandbox.call('POST', '/__sandbox/webhooks/test');
    expect(ninth.status).toBe(429);
    expect(ninth.headers['retry-after']).toBe('1');
    expect(ninth.body.message).toMatch(/8 test pings and redeliveries in flight/);
    await sandbox.call('PUT', '/__sandbox/webhook', { token: TOKEN_B, body: { url: receiver.url } });
    receiver.respond = (_, i) => (i >= 8 ? { status: 200 } : { status: 200, hang: true });
    expect((await sandbox.call('POST', '/__sandbox/webhooks/test', { token: TOKEN_B })).status).toBe(200);
    // The held ones end with the attempt timeout, or the close in afterEach.
    void Promise.allSettled(pings);
  });

  it('returns 409 when the client has no webhook URL', async () => {
    const res = await sandbox.call('POST', '/__sandbox/webhooks/test', { token: TOKEN_B });
    expect(res.status).toBe(409);
  });
});

describe('POST /__sandbox/reset', () => {
  it('removes the client deliveries and endpoint setting, cancelling pending retries', async () => {
    receiver.respond = () => ({ status: 500 });
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } });
    await createOrders(sandbox, 2);
    await sandbox.advance(60_000);
    const res = await sandbox.call('POST', '/__sandbox/reset');
    expect(res.body.removed.webhooks).toBe(3);
    expect(await deliveries(sandbox)).toEqual([]);
    expect((await sandbox.call('GET', '/__sandbox/webhook')).body.source).toBe('config');
    await sandbox.advance(3_600_000);
    expect(receiver.received).toHaveLength(2);
  });
});

describe('delivery never fails the request that caused it', () => {
  it('answers POST /__sandbox/orders/{no}/awb at once even when the receiver hangs', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    const [orderNo] = await createOrders(sandbox, 1);
    const res = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    expect(res.status).toBe(200);
    expect(res.body.awb).not.toBeNull();
    const [delivery] = await deliveries(sandbox);
    // Its attempt is due and being made.
    expect(delivery).toMatchObject({ status: 'queued', event: 'awb.generated' });
  });
});

describe('queued deliveries', () => {
  it('show due attempts beyond the 8 a client makes at once as queued, never failed unattempted; pending once their retry is ahead', async () => {
    await sandbox.close();
    sandbox = await webhookSandbox(receiver.url, { webhookTimeout: '300ms' });
    receiver.respond = () => ({ status: 200, hang: true });
    await createOrders(sandbox, 10);
    const advancing = sandbox.advance(60_000);
    while (receiver.received.length < 8) await new Promise((r) => setTimeout(r, 10));
    const queued = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=queued');
    expect(queued.body.total).toBe(10);
    expect(queued.body.deliveries.every((d: { status: string; attempts: unknown[] }) => d.status === 'queued' && d.attempts.length === 0)).toBe(true);
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=pending')).body.total).toBe(0);
    await advancing;
    // Every attempt timed out; each retry is 5 s ahead on the client's clock.
    const pending = await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=pending');
    expect(pending.body.total).toBe(10);
    expect(pending.body.deliveries.every((d: { attempts: Array<{ error: string }> }) => d.attempts.length === 1 && /timed out/.test(d.attempts[0]!.error))).toBe(true);
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries?status=queued')).body.total).toBe(0);
  });
});
