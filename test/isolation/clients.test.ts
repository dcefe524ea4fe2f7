import supertest, { type Response } from 'supertest';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';

const SECRET_A = 'whsec_QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB';
const SECRET_B = 'whsec_QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJC';

/** Client A's records, made before each case: what client B must neither see nor change. */
interface World {
  orderNo: string;
  pendingOrderNo: string;
  awb: string;
  deliveryId: string;
  faultId: string;
  endpointId: string;
}

let sandbox: TestSandbox;
let receiverA: Receiver;
let receiverB: Receiver;
let world: World;
let attempts = 0;

const asA = (method: string, path: string, body?: unknown) => sandbox.call(method, path, { token: TOKEN_A, body });
const asB = (method: string, path: string, body?: unknown): Promise<Response> => {
  attempts++;
  return sandbox.call(method, path, { token: TOKEN_B, body });
};

/** A's provider request that its fault rule answers 503 (a status the spec does not document, so not through `call`). */
const faultedAsA = () => supertest(sandbox.app).get('/v1/couriers').set('Authorization', `Bearer ${TOKEN_A}`);

/** Everything client A can see of its own data through the control API (no provider request, so the journal does not change). */
async function viewOfA(): Promise<unknown> {
  const [orders, webhook, deliveries, faults, requests, report, endpoints] = await Promise.all(
    ['/__sandbox/orders', '/__sandbox/webhook', '/__sandbox/webhooks/deliveries', '/__sandbox/faults', '/__sandbox/requests', '/__sandbox/report', '/__sandbox/webhooks/endpoints'].map((p) => asA('GET', p)),
  );
  const { generated_at: _at, ...readiness } = report!.body as { generated_at: string };
  return { orders: orders!.body, webhook: webhook!.body, deliveries: deliveries!.body, faults: faults!.body, requests: requests!.body, readiness, endpoints: endpoints!.body, received: receiverA.received.length };
}

beforeEach(async () => {
  receiverA ??= await Receiver.start();
  receiverB ??= await Receiver.start();
  receiverA.received.length = 0;
  receiverB.received.length = 0;
  sandbox = await testSandbox({ awbDelay: '1m' });
  await asA('PUT', '/__sandbox/webhook', { url: receiverA.url, secret: SECRET_A });
  await asB('PUT', '/__sandbox/webhook', { url: receiverB.url, secret: SECRET_B });
  const [orderNo] = (await asA('POST', '/v1/order', createRequest(1))).body.order_numbers as string[];
  await sandbox.advance(60_000);
  const [pendingOrderNo] = (await asA('POST', '/v1/order', createRequest(1))).body.order_numbers as string[];
  const awb = (await asA('GET', `/__sandbox/orders/${orderNo}`)).body.awb as string;
  const deliveryId = (await asA('GET', '/__sandbox/webhooks/deliveries')).body.deliveries[0].id as string;
  const faultId = (await asA('POST', '/__sandbox/faults', { match: { operation_id: 'listCouriers' }, action: { type: 'status', status: 503 }, times: 5 })).body.id as string;
  const endpointId = (await asA('POST', '/__sandbox/webhooks/endpoints', { url: `${receiverA.url}/second`, events: ['order.cancelled'] })).body.id as string;
  await faultedAsA(); // one journal entry (and one fault hit)
  world = { orderNo: orderNo!, pendingOrderNo: pendingOrderNo!, awb, deliveryId, faultId, endpointId };
});
afterEach(() => sandbox.close());
afterAll(async () => {
  await receiverA?.close();
  await receiverB?.close();
});

/**
 * One row per operation that reads or changes per-client state: what client B sends,
 * and what it must get. After each, client A's whole view must be exactly as before.
 */
const rows: Array<{ op: string; send: (w: World) => Promise<Response>; expect: (res: Response, w: World) => void }> = [
  { op: 'trackOrder', send: (w) => asB('GET', `/v1/order/tracking/${w.awb}`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'getOrderDetail', send: (w) => asB('GET', `/v1/order/${w.orderNo}`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'cancelOrder', send: (w) => asB('POST', '/v1/order/cancel', { order_no: w.orderNo }), expect: (res) => expect(res.status).toBe(404) },
  { op: 'createOrder', send: () => asB('POST', '/v1/order', createRequest(1)), expect: (res) => expect(res.status).toBe(201) },
  { op: 'listOrders', send: () => asB('GET', '/__sandbox/orders'), expect: (res) => expect(res.body).toEqual({ total: 0, next_cursor: null, orders: [] }) },
  { op: 'getOrderState', send: (w) => asB('GET', `/__sandbox/orders/${w.orderNo}`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'generateAwb', send: (w) => asB('POST', `/__sandbox/orders/${w.pendingOrderNo}/awb`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'advanceOrder', send: (w) => asB('POST', `/__sandbox/orders/${w.orderNo}/advance`, {}), expect: (res) => expect(res.status).toBe(404) },
  { op: 'triggerEvent', send: (w) => asB('POST', '/__sandbox/events/trigger', { event: 'awb.generated', order_no: w.pendingOrderNo }), expect: (res) => expect(res.status).toBe(404) },
  { op: 'changeProviderState', send: () => asB('POST', '/__sandbox/provider-states', { state: 'an order is delivered', action: 'teardown' }), expect: (res) => expect(res.body).toEqual({ removed: 0 }) },
  { op: 'resetClient', send: () => asB('POST', '/__sandbox/reset'), expect: (res) => expect(res.body.removed.orders).toBe(0) },
  {
    op: 'getWebhook',
    send: () => asB('GET', '/__sandbox/webhook'),
    expect: (res) => {
      expect(res.body).toMatchObject({ url: receiverB.url, secret: SECRET_B });
      expect(JSON.stringify(res.body)).not.toContain(SECRET_A);
    },
  },
  { op: 'setWebhook', send: () => asB('PUT', '/__sandbox/webhook', { url: 'http://127.0.0.1:9/b', secret: SECRET_B }), expect: (res) => expect(res.status).toBe(200) },
  { op: 'listWebhookDeliveries', send: () => asB('GET', '/__sandbox/webhooks/deliveries'), expect: (res) => expect(res.body).toEqual({ total: 0, next_cursor: null, deliveries: [] }) },
  { op: 'getWebhookDelivery', send: (w) => asB('GET', `/__sandbox/webhooks/deliveries/${w.deliveryId}`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'redeliverWebhook', send: (w) => asB('POST', `/__sandbox/webhooks/deliveries/${w.deliveryId}/redeliver`), expect: (res) => expect(res.status).toBe(404) },
  {
    op: 'testWebhook',
    send: () => asB('POST', '/__sandbox/webhooks/test'),
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(receiverB.received).toHaveLength(1); // B's ping reached B's receiver, not A's
    },
  },
  { op: 'listFaultRules', send: () => asB('GET', '/__sandbox/faults'), expect: (res) => expect(res.body).toEqual({ rules: [] }) },
  { op: 'createFaultRule', send: () => asB('POST', '/__sandbox/faults', { action: { type: 'status', status: 500 }, times: 100 }), expect: (res) => expect(res.status).toBe(201) },
  { op: 'deleteFaultRules', send: () => asB('DELETE', '/__sandbox/faults'), expect: (res) => expect(res.body.removed).toBe(0) },
  { op: 'deleteFaultRule', send: (w) => asB('DELETE', `/__sandbox/faults/${w.faultId}`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'listRequests', send: () => asB('GET', '/__sandbox/requests'), expect: (res) => expect(res.body.requests).toEqual([]) },
  { op: 'clearRequests', send: () => asB('DELETE', '/__sandbox/requests'), expect: (res) => expect(res.status).toBe(200) },
  { op: 'getReport', send: () => asB('GET', '/__sandbox/report'), expect: (res) => expect(res.body).toMatchObject({ run: null, events: [], summary: { handled: 0, not_handled: 0 } }) },
  { op: 'startRun', send: () => asB('POST', '/__sandbox/runs', { name: 'b-run' }), expect: (res) => expect(res.status).toBe(201) },
  {
    op: 'runChecks',
    send: () => asB('POST', '/__sandbox/checks'),
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(receiverB.received).toHaveLength(5); // B's checks reached B's receiver, not A's
    },
  },
  // Sandbox-wide: with two clients a partner may not do them (no admin token is configured here).
  { op: 'listClients', send: () => asB('GET', '/__sandbox/clients'), expect: (res) => expect(res.status).toBe(403) },
  { op: 'whoAmI', send: () => asB('GET', '/__sandbox/whoami'), expect: (res) => expect(res.body).toEqual({ role: 'partner', client: { id: 'client-b', name: 'client-b', couriers: ['jne', 'jnt', 'sicepat', 'anteraja', 'posindonesia'] }, sandbox_wide: false }) },
  { op: 'listWebhookEndpoints', send: () => asB('GET', '/__sandbox/webhooks/endpoints'), expect: (res, w) => expect(JSON.stringify(res.body)).not.toContain(w.endpointId) },
  { op: 'createWebhookEndpoint', send: () => asB('POST', '/__sandbox/webhooks/endpoints', { url: `${receiverB.url}/second` }), expect: (res) => expect(res.status).toBe(201) },
  { op: 'getWebhookEndpoint', send: (w) => asB('GET', `/__sandbox/webhooks/endpoints/${w.endpointId}`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'updateWebhookEndpoint', send: (w) => asB('PATCH', `/__sandbox/webhooks/endpoints/${w.endpointId}`, { enabled: false }), expect: (res) => expect(res.status).toBe(404) },
  { op: 'deleteWebhookEndpoint', send: (w) => asB('DELETE', `/__sandbox/webhooks/endpoints/${w.endpointId}`), expect: (res) => expect(res.status).toBe(404) },
  { op: 'recoverWebhooks', send: () => asB('POST', '/__sandbox/webhooks/recover', { since: '2000-01-01T00:00:00Z' }), expect: (res) => expect(res.body.queued).toBe(0) },
  { op: 'countRequests', send: () => asB('POST', '/__sandbox/requests/count', { operation_id: 'listCouriers' }), expect: (res) => expect(res.body.count).toBe(0) },
  { op: 'resetSandbox', send: () => asB('POST', '/__sandbox/reset-all'), expect: (res) => expect(res.status).toBe(403) },
  { op: 'advanceAllClocks', send: () => asB('POST', '/__sandbox/clock/advance-all', { ms: 86_400_000 }), expect: (res) => expect(res.status).toBe(403) },
  { op: 'setClockSpeed', send: () => asB('PUT', '/__sandbox/clock/speed', { speed: 60 }), expect: (res) => expect(res.status).toBe(403) },
];

/** Operations with no per-client state: the same answer for every client (specs, scenarios, coverage, rates) or, by design, shared (the clock). */
const SHARED = new Set([
  'getHealth', 'getMetrics', 'getProviderSpec', 'getControlSpec', 'getPodPhoto', 'listScenarios', 'listProviderStates', 'getClock', 'advanceClock',
  'getEstimationRates', 'listProvinces', 'listCities', 'listDistricts', 'searchArea', 'listCouriers', 'getShippingFee', 'streamShippingFee',
]);

describe('isolation between clients: client B against client A’s records', () => {
  it('covers every operation of both specs: each is in the table below or known to hold no per-client state', () => {
    const all = [...sandbox.services.specs.provider.operations, ...sandbox.services.specs.control.operations].map((o) => o.operationId);
    const unclassified = all.filter((id) => !SHARED.has(id) && !rows.some((r) => r.op === id));
    expect(unclassified, 'a new operation: add a row to this table (or to SHARED if it keeps no per-client state)').toEqual([]);
  });

  it.each(rows.map((r) => [r.op, r] as const))('%s: B gets 404 or its own empty data, and A’s data is unchanged', async (_, row) => {
    const before = await viewOfA();
    const res = await row.send(world);
    row.expect(res, world);
    // The control API's 404 names the order B asked for, as for one that does not exist: nothing else of A's shows.
    expect(JSON.stringify(res.body).replace(`Order ${world.orderNo} not found.`, 'Order … not found.')).not.toContain(world.orderNo);
    expect(await viewOfA()).toEqual(before);
    // A's own requests still behave as before: its fault rule (not B's) applies, its order is still its own.
    expect((await faultedAsA()).status).toBe(503);
    expect((await asA('GET', `/v1/order/${world.orderNo}`)).status).toBe(200);
  });

  it('prints its figures', () => {
    console.log(`[isolation] ${rows.length} stateful operations, ${attempts} requests as client B (setup included), 0 leaks: B saw none of A's records and changed none`);
  });
});
