import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { onPostgres } from '../support/store-kind.js';
import { tempDir } from '../support/tmp.js';
import { SnapshotFile } from '../../src/store/embedded/file/snapshot-file.js';
import type { JournaledFileData } from '../../src/store/embedded/file/types.js';
import { Receiver, type Received } from './receiver.js';
import { createOrders, deliveries } from './support.js';

const READER = 'token-reader';

/** An endpoint as the control API shows it. */
interface EndpointView {
  id: string;
  url: string | null;
  events: string[] | null;
  enabled: boolean;
  secret: string;
  description: string;
}

let main: Receiver;
let sandbox: TestSandbox;
const others: Receiver[] = [];
const data = tempDir();

/** Client A sends to `main` through its default endpoint (the config file); a read_only token acts for client C. */
const start = (options = {}) =>
  testSandbox({
    clients: [
      { token: TOKEN_A, id: 'client-a', webhook: { url: main.url } },
      { token: TOKEN_B, id: 'client-b' },
      { token: READER, id: 'client-c', read_only: true },
    ],
    ...options,
  });

beforeEach(async () => {
  main = await Receiver.start();
  sandbox = await start();
});
afterEach(async () => {
  await sandbox.close();
  await Promise.all([main, ...others.splice(0)].map((r) => r.close()));
});

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  others.push(r);
  return r;
}

async function createEndpoint(body: Record<string, unknown>, token = TOKEN_A): Promise<EndpointView> {
  const res = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body, token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as EndpointView;
}

async function listEndpoints(token = TOKEN_A): Promise<EndpointView[]> {
  const res = await sandbox.call('GET', '/__sandbox/webhooks/endpoints', { token });
  expect(res.status).toBe(200);
  return res.body.endpoints as EndpointView[];
}

/** What a receiver got, as `event order_no` lines in arrival order, each verified with `secret`. */
function verified(r: Receiver, secret: string): string[] {
  const hook = new Webhook(secret);
  return r.received.map((w: Received) => {
    const body = hook.verify(w.body, w.headers as Record<string, string>) as { event: string; order_no: string };
    return `${body.event} ${body.order_no}`;
  });
}

/** Two orders delivered, one whose AWB fails, then the first cancelled: every kind of event once at least. */
async function playEvents(): Promise<{ delivered: string[]; failed: string }> {
  const delivered = await createOrders(sandbox, 2);
  const [failed] = await createOrders(sandbox, 1, { 'X-Sandbox-Scenario': 'awb_failed' });
  await sandbox.advance(60_000);
  expect((await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: delivered[0], reason: 'changed mind' } })).status).toBe(200);
  await sandbox.advance(0);
  return { delivered, failed: failed! };
}

describe('webhook endpoints: one delivery per endpoint whose filter admits the event', () => {
  it('gives two endpoints with different event filters exactly their events, each signed with its own secret', async () => {
    const awbReceiver = await receiver();
    const laterReceiver = await receiver();
    const awb = await createEndpoint({ url: awbReceiver.url, events: ['awb.generated'], description: 'staging' });
    const later = await createEndpoint({ url: laterReceiver.url, events: ['awb.failed', 'order.cancelled'] });
    expect(awb.secret).not.toBe(later.secret);

    const { delivered, failed } = await playEvents();

    expect(verified(awbReceiver, awb.secret).sort()).toEqual(delivered.map((o) => `awb.generated ${o}`).sort());
    expect(verified(laterReceiver, later.secret).sort()).toEqual([`awb.failed ${failed}`, `order.cancelled ${delivered[0]}`].sort());
    // The default endpoint (no filter) still gets every event, as before.
    const defaultSecret = (await sandbox.call('GET', '/__sandbox/webhook')).body.secret as string;
    expect(verified(main, defaultSecret)).toHaveLength(4);
    // One delivery per endpoint, each with its own webhook-id, and the log says where each went.
    const ids = [...main.received, ...awbReceiver.received, ...laterReceiver.received].map((w) => w.id);
    expect(new Set(ids).size).toBe(8);
    const toAwb = await deliveries(sandbox, `&endpoint_id=${awb.id}`);
    expect(toAwb.map((d) => [d.endpoint_id, d.event, d.status])).toEqual([
      [awb.id, 'awb.generated', 'delivered'],
      [awb.id, 'awb.generated', 'delivered'],
    ]);
    expect((await deliveries(sandbox, '&endpoint_id=default')).every((d) => d.endpoint_id === 'default')).toBe(true);
    expect(await deliveries(sandbox)).toHaveLength(8);
  });

  it('retries each delivery on its own: a failing endpoint does not hold back the others', async () => {
    const flaky = await receiver();
    flaky.respond = (_w, i) => ({ status: i < 2 ? 500 : 200 });
    const endpoint = await createEndpoint({ url: flaky.url });
    const [orderNo] = await createOrders(sandbox);
    await sandbox.advance(60_000);
    expect(main.received).toHaveLength(1);
    for (let i = 0; i < 5 && flaky.received.length < 3; i++) await sandbox.advance(3_600_000);
    expect(flaky.received.map((w) => w.id)).toEqual([flaky.received[0]!.id, flaky.received[0]!.id, flaky.received[0]!.id]);
    const [toFlaky] = await deliveries(sandbox, `&endpoint_id=${endpoint.id}`);
    expect(toFlaky).toMatchObject({ order_no: orderNo, status: 'delivered', attempts: [{ status_code: 500 }, { status_code: 500 }, { status_code: 200 }] });
    const [toDefault] = await deliveries(sandbox, '&endpoint_id=default');
    expect(toDefault!.attempts).toHaveLength(1);
  });

  it("schedules another endpoint's attempts as a job kind of its own, which a replica without endpoints never claims", async () => {
    const down = await receiver();
    down.respond = () => ({ status: 503 });
    main.respond = () => ({ status: 503 });
    await createEndpoint({ url: down.url });
    await createOrders(sandbox);
    await sandbox.advance(60_000);
    const [toDefault, toOther] = [(await deliveries(sandbox, '&endpoint_id=default'))[0]!, (await deliveries(sandbox))[1]!];
    expect(toOther.endpoint_id).toMatch(/^ep_/);
    const { jobs } = sandbox.services.storage;
    expect(await jobs.get('webhook', toDefault.id)).toBeDefined();
    expect(await jobs.get('endpoint-webhook', toOther.id)).toBeDefined();
    expect(await jobs.get('webhook', toOther.id)).toBeUndefined();
  });

  it("grades another endpoint's deliveries in the readiness report as the default's", async () => {
    const flaky = await receiver();
    flaky.respond = (_w, i) => ({ status: i === 0 ? 500 : 200 });
    await createEndpoint({ url: flaky.url });
    await createOrders(sandbox);
    await sandbox.advance(60_000);
    const before = (await sandbox.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string }> };
    // The default endpoint acknowledged at once: no retry to grade yet.
    expect(before.items.find((i) => i.id === 'webhook.retry-acknowledged')?.status).toBe('not_exercised');
    await sandbox.advance(5_000);
    expect(flaky.received).toHaveLength(2);
    const after = (await sandbox.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string }> };
    expect(after.items.find((i) => i.id === 'webhook.retry-acknowledged')?.status).toBe('handled');
  });

  it('sends nothing to a disabled endpoint, and its events again once enabled', async () => {
    const r = await receiver();
    const endpoint = await createEndpoint({ url: r.url, enabled: false });
    await createOrders(sandbox);
    await sandbox.advance(60_000);
    expect(r.received).toHaveLength(0);
    expect(await deliveries(sandbox, `&endpoint_id=${endpoint.id}`)).toHaveLength(0);
    const res = await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { body: { enabled: true } });
    expect(res.body).toMatchObject({ enabled: true, state: 'enabled', disabled_at: null });
    const [second] = await createOrders(sandbox);
    await sandbox.advance(60_000);
    expect(r.received.map((w) => w.json.order_no)).toEqual([second]);
  });

  it('disables only the endpoint whose receiver answered 410 Gone', async () => {
    const gone = await receiver();
    gone.respond = () => ({ status: 410 });
    const endpoint = await createEndpoint({ url: gone.url });
    await createOrders(sandbox);
    await sandbox.advance(60_000);
    const after = await listEndpoints();
    expect(after.find((e) => e.id === endpoint.id)).toMatchObject({ enabled: false, state: 'disabled' });
    expect(after[0]).toMatchObject({ id: 'default', enabled: true });
    await createOrders(sandbox);
    await sandbox.advance(60_000);
    expect(gone.received).toHaveLength(1);
    expect(main.received).toHaveLength(2);
  });

  it('fails a pending delivery of an endpoint deleted meanwhile', async () => {
    const down = await receiver();
    down.respond = () => ({ status: 503 });
    const endpoint = await createEndpoint({ url: down.url });
    await createOrders(sandbox);
    await sandbox.advance(60_000);
    expect((await sandbox.call('DELETE', `/__sandbox/webhooks/endpoints/${endpoint.id}`)).body).toEqual({ success: true, removed: 1 });
    await sandbox.advance(3_600_000);
    const [toDeleted] = await deliveries(sandbox, `&endpoint_id=${endpoint.id}`);
    expect(toDeleted).toMatchObject({ status: 'failed', attempts: [{ status_code: 503 }] });
    expect(toDeleted!.last_error).toContain('deleted');
    expect(down.received).toHaveLength(1);
  });
});

describe('the default endpoint', () => {
  it('is listed first with the URL of the config file, every event and its secret', async () => {
    const [first, ...rest] = await listEndpoints();
    const webhook = (await sandbox.call('GET', '/__sandbox/webhook')).body;
    expect(first).toMatchObject({ id: 'default', url: main.url, listener: null, events: null, enabled: true, state: 'enabled', secret: webhook.secret, source: 'config' });
    expect(rest).toEqual([]);
  });

  it('follows PUT /__sandbox/webhook, and its filter set through the endpoints API', async () => {
    const other = await receiver();
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: other.url } });
    const patched = await sandbox.call('PATCH', '/__sandbox/webhooks/endpoints/default', { body: { events: ['order.cancelled'], description: 'main' } });
    expect(patched.body).toMatchObject({ id: 'default', url: other.url, events: ['order.cancelled'], description: 'main', source: 'runtime' });
    const { delivered } = await playEvents();
    expect(other.received.map((w) => `${w.json.event as string} ${w.json.order_no as string}`)).toEqual([`order.cancelled ${delivered[0]}`]);
    expect(main.received).toHaveLength(0);
  });

  it('holds deliveries while disabled through the API, and sends them once enabled again', async () => {
    const disabled = await sandbox.call('PATCH', '/__sandbox/webhooks/endpoints/default', { body: { enabled: false } });
    expect(disabled.body).toMatchObject({ enabled: false, state: 'disabled', disabled_reason: 'disabled through the control API' });
    const [orderNo] = await createOrders(sandbox);
    await sandbox.advance(60_000);
    expect(main.received).toHaveLength(0);
    expect((await deliveries(sandbox))[0]).toMatchObject({ status: 'paused', endpoint_id: 'default' });
    await sandbox.call('PATCH', '/__sandbox/webhooks/endpoints/default', { body: { enabled: true } });
    await sandbox.advance(0);
    expect(main.received.map((w) => w.json.order_no)).toEqual([orderNo]);
  });

  it('cannot be deleted (409), and stays as it was', async () => {
    const res = await sandbox.call('DELETE', '/__sandbox/webhooks/endpoints/default');
    expect(res.status).toBe(409);
    expect(res.body.message).toContain('default endpoint');
    expect((await listEndpoints())[0]).toMatchObject({ id: 'default', url: main.url, enabled: true });
  });
});

describe('PATCH /__sandbox/webhooks/endpoints/{endpoint_id}', () => {
  it('rotates to a new random secret each time, even on a seeded sandbox at one clock time', async () => {
    const endpoint = await createEndpoint({ url: 'http://127.0.0.1:9/rotate' });
    const first = await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { body: { rotate_secret: true } });
    const second = await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { body: { rotate_secret: true } });
    expect(first.status).toBe(200);
    expect(new Set([endpoint.secret, first.body.secret, second.body.secret]).size).toBe(3);
  });

  it('changes URL, secret and description; a rotated secret signs the next delivery', async () => {
    const first = await receiver();
    const second = await receiver();
    const endpoint = await createEndpoint({ url: first.url });
    const moved = await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { body: { url: second.url, rotate_secret: true, description: 'dev' } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: endpoint.id, url: second.url, description: 'dev', events: null });
    expect(moved.body.secret).not.toBe(endpoint.secret);
    const [orderNo] = await createOrders(sandbox);
    await sandbox.advance(60_000);
    expect(first.received).toHaveLength(0);
    expect(verified(second, moved.body.secret as string)).toEqual([`awb.generated ${orderNo}`]);
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect((await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { body: { secret } })).body.secret).toBe(secret);
    expect((await sandbox.call('GET', `/__sandbox/webhooks/endpoints/${endpoint.id}`)).body).toMatchObject({ id: endpoint.id, secret, url: second.url });
  });
});

describe('bad input changes nothing', () => {
  it.each([
    ['POST', { url: 'http://127.0.0.1:9/x', events: ['awb.shipped'] }, 'events[0]'],
    ['POST', { url: 'http://127.0.0.1:9/x', events: ['awb.generated', 'parcel.lost'] }, 'events[1]'],
    ['POST', { url: 'not a url' }, 'url'],
    ['POST', { url: 'ftp://example.com/x' }, 'url'],
    ['POST', {}, 'url'],
    ['POST', { url: 'http://127.0.0.1:9/x', secret: 'plain' }, 'secret'],
    ['POST', { url: 'http://127.0.0.1:9/x', secret: 'whsec_CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJ==' }, 'secret'],
    ['POST', { url: 'http://127.0.0.1:9/x', events: [] }, 'events'],
    ['PATCH', { events: ['awb.shipped'] }, 'events[0]'],
    ['PATCH', { events: [] }, 'events'],
    ['PATCH', { url: 'nope' }, 'url'],
    ['PATCH', { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', rotate_secret: true }, 'rotate_secret'],
    ['PATCH', { enabled: 'yes' }, 'enabled'],
  ])('%s with %j answers 400 naming %s', async (method, body, field) => {
    const existing = await createEndpoint({ url: 'http://127.0.0.1:9/kept', events: ['awb.failed'] });
    const before = await listEndpoints();
    const path = method === 'POST' ? '/__sandbox/webhooks/endpoints' : `/__sandbox/webhooks/endpoints/${existing.id}`;
    const res = await sandbox.call(method, path, { body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await listEndpoints()).toEqual(before);
  });

  it('names the events to choose from for a number where an event name goes, not the hint to send numbers as text', async () => {
    const res = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/x', events: ['awb.generated', 1] } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ field: 'events[1]', message: expect.stringMatching(/^must be one of: .*awb\.generated/) });
  });

  it.each([
    ['GET', undefined],
    ['PATCH', { enabled: false }],
    ['DELETE', undefined],
  ])('%s of an endpoint the client does not have answers 404 naming it', async (method, body) => {
    const before = await listEndpoints();
    const res = await sandbox.call(method, '/__sandbox/webhooks/endpoints/ep_0000000000', { body });
    expect(res.status).toBe(404);
    expect(res.body.message).toContain('ep_0000000000');
    expect(await listEndpoints()).toEqual(before);
  });

  it('answers 400 past 20 endpoints besides the default one, and keeps the 20', async () => {
    for (let i = 0; i < 20; i++) await createEndpoint({ url: `http://127.0.0.1:9/${i}` });
    const res = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/one-more' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('20 endpoints');
    expect(await listEndpoints()).toHaveLength(21);
  });

  it('answers 400 naming endpoint_id for an id of the wrong form', async () => {
    const res = await sandbox.call('GET', '/__sandbox/webhooks/endpoints/nope');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('endpoint_id');
  });

  it("keeps each client's endpoints apart: another client's id is 404", async () => {
    const endpoint = await createEndpoint({ url: 'http://127.0.0.1:9/a' });
    expect((await sandbox.call('GET', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { token: TOKEN_B })).status).toBe(404);
    expect((await sandbox.call('DELETE', `/__sandbox/webhooks/endpoints/${endpoint.id}`, { token: TOKEN_B })).status).toBe(404);
    expect((await listEndpoints(TOKEN_B)).map((e) => e.id)).toEqual(['default']);
    expect((await listEndpoints()).map((e) => e.id)).toEqual(['default', endpoint.id]);
  });

  it('gives a read_only token 403 on every write, and its secrets masked', async () => {
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/__sandbox/webhooks/endpoints', { url: 'http://127.0.0.1:9/x' }],
      ['PATCH', '/__sandbox/webhooks/endpoints/default', { enabled: false }],
      ['DELETE', '/__sandbox/webhooks/endpoints/ep_0000000000', undefined],
    ];
    for (const [method, path, body] of writes) expect((await sandbox.call(method, path, { token: READER, body })).status).toBe(403);
    const [shown] = await listEndpoints(READER);
    expect(shown).toMatchObject({ id: 'default', enabled: true });
    expect(shown!.secret).toContain('…');
  });

  it('refuses a URL the webhook target policy refuses, naming url', async () => {
    await sandbox.close();
    sandbox = await start({ webhookTargets: 'public' });
    const res = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/x' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: 'url', message: expect.stringContaining('refused by webhook target policy') });
    expect((await listEndpoints()).map((e) => e.id)).toEqual(['default']);
  });
});

describe('endpoints over time', () => {
  it('keep across a restart on the same data, and go with a reset', async () => {
    await sandbox.close();
    const file = join(data(), 'sandbox.json');
    sandbox = await start({ data: file });
    const endpoint = await createEndpoint({ url: 'http://127.0.0.1:9/kept', events: ['awb.generated'] });
    await sandbox.close();
    sandbox = await start({ data: file });
    expect(await listEndpoints()).toEqual([expect.objectContaining({ id: 'default', url: main.url }), endpoint]);
    expect((await sandbox.call('POST', '/__sandbox/reset')).status).toBe(200);
    expect((await listEndpoints()).map((e) => e.id)).toEqual(['default']);
  });

  // A data file is the embedded store's; on PostgreSQL a test's data file is a database of its own.
  it.skipIf(onPostgres)('start from a data file of the first version: its one endpoint is the default one, with its deliveries', async () => {
    await sandbox.close();
    const file = join(data(), 'old.json');
    const old: JournaledFileData = {
      schema_version: 1,
      journal_generation: 1,
      meta: { seed: 's1', counters: { order: 5, batch: 2, awb: { jne: 7 } }, webhook_counter: 1 },
      orders: {},
      deliveries: {
        msg_old: { id: 'msg_old', seq: 1, client_id: 'client-a', event: 'awb.generated', order_no: '51', body: '{"event":"awb.generated"}', chaos: [], status: 'delivered', created_at: 1, next_attempt_at: null, last_error: null, attempts: [] },
      },
      webhook_endpoints: { 'client-a': { client_id: 'client-a', url: 'http://127.0.0.1:9/hook', updated_at: 1 } },
      webhook_secrets: { 'client-a': 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    };
    await new SnapshotFile(file).write(old);
    sandbox = await start({ data: file });
    expect(await listEndpoints()).toEqual([expect.objectContaining({ id: 'default', url: 'http://127.0.0.1:9/hook', source: 'runtime', events: null, enabled: true })]);
    expect(await deliveries(sandbox)).toEqual([expect.objectContaining({ id: 'msg_old', endpoint_id: 'default' })]);
  });
});
