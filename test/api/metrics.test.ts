import supertest from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.js';
import { Forbidden, Unavailable } from '../../src/shared/errors.js';
import { metricsModule } from '../../src/app/modules/metrics.js';
import { buildServices, stopServices } from '../../src/app/sandbox.js';
import type { Services } from '../../src/app/services.js';
import { parsePrometheus, valueOf, type Sample } from '../support/prometheus.js';
import { defaultTestOptions, testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { createOrders, startWebhookSandbox, stopWebhookSandbox, webhookSandbox } from '../webhooks/support.js';

let sandbox: TestSandbox | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  if (sandbox && receiver) await stopWebhookSandbox(sandbox, receiver);
  else await sandbox?.close();
  sandbox = receiver = undefined;
});

/** Scrapes the sandbox as Prometheus would: no token. */
async function scrape(s: TestSandbox): Promise<Sample[]> {
  const res = await s.call('GET', '/__sandbox/metrics', { token: null });
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(res.text);
}

/** A value once the request that moves it has been observed (observers run when the connection closes). */
const eventually = (s: TestSandbox, name: string, labels: Record<string, string> = {}) => expect.poll(async () => valueOf(await scrape(s), name, labels), { timeout: 2_000 });

describe('GET /__sandbox/metrics', () => {
  it('answers every metric family in the Prometheus text format, without a token', async () => {
    sandbox = await testSandbox();
    const res = await sandbox.call('GET', '/__sandbox/metrics', { token: null });
    expect(res.status).toBe(200);
    const names = new Set(parsePrometheus(res.text).map((s) => s.name));
    for (const name of [
      'sandbox_orders_created_total',
      'sandbox_awbs_generated_total',
      'sandbox_orders',
      'sandbox_webhook_outbox',
      'sandbox_jobs_pending',
      'sandbox_store_busy_waits_total',
      'sandbox_store_up',
      'process_resident_memory_bytes',
    ]) {
      expect(names, name).toContain(name);
    }
    expect(valueOf(parsePrometheus(res.text), 'sandbox_store_up')).toBe(1);
    for (const family of ['sandbox_http_requests_total', 'sandbox_orders_removed_total', 'sandbox_http_request_duration_seconds', 'sandbox_webhook_attempts_total', 'sandbox_scheduler_lag_seconds', 'sandbox_event_loop_delay_seconds']) {
      expect(res.text).toContain(`# TYPE ${family} `);
    }
  });

  it('counts how long requests waited for their turn', async () => {
    sandbox = await testSandbox();
    const before = await scrape(sandbox);
    await createOrders(sandbox, 2);
    const after = await scrape(sandbox);
    // The create waited once, and the scrape after it (no token: in a lane of its own) once, counted before its text was made.
    expect(valueOf(after, 'sandbox_request_turn_wait_seconds_count')).toBe(valueOf(before, 'sandbox_request_turn_wait_seconds_count') + 2);
  });

  it('counts a create: orders created and createOrder requests by status', async () => {
    sandbox = await testSandbox();
    const before = await scrape(sandbox);
    await createOrders(sandbox, 2);
    await eventually(sandbox, 'sandbox_http_requests_total', { operation: 'createOrder', status: '201' }).toBe(valueOf(before, 'sandbox_http_requests_total', { operation: 'createOrder', status: '201' }) + 1);
    const after = await scrape(sandbox);
    expect(valueOf(after, 'sandbox_orders_created_total')).toBe(valueOf(before, 'sandbox_orders_created_total') + 2);
    expect(valueOf(after, 'sandbox_orders')).toBe(2);
    expect(valueOf(after, 'sandbox_http_request_duration_seconds_count', { operation: 'createOrder', status: '201' })).toBe(1);

    const bad = await sandbox.call('POST', '/v1/order', { body: {} });
    expect(bad.status).toBe(400);
    await eventually(sandbox, 'sandbox_http_requests_total', { operation: 'createOrder', status: '400' }).toBe(1);
    expect(valueOf(await scrape(sandbox), 'sandbox_orders_created_total')).toBe(2);
  });

  it('counts an AWB generated when the manual clock is advanced past its delay', async () => {
    sandbox = await testSandbox();
    await createOrders(sandbox, 1);
    expect(valueOf(await scrape(sandbox), 'sandbox_awbs_generated_total')).toBe(0);
    await sandbox.advance(60_000);
    expect(valueOf(await scrape(sandbox), 'sandbox_awbs_generated_total')).toBe(1);
  });

  it('counts webhook attempts by outcome, and shows held deliveries as the outbox', async () => {
    ({ sandbox, receiver } = await startWebhookSandbox());
    await createOrders(sandbox, 1);
    await createOrders(sandbox, 1, {}, TOKEN_B); // client B has no URL: its delivery is held
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(1);
    let samples = await scrape(sandbox);
    expect(valueOf(samples, 'sandbox_webhook_attempts_total', { outcome: 'delivered' })).toBe(1);
    expect(valueOf(samples, 'sandbox_webhook_outbox', { status: 'paused' })).toBe(1);
    expect(valueOf(samples, 'sandbox_webhook_outbox', { status: 'pending' })).toBe(0);

    receiver.respond = () => ({ status: 503 });
    expect((await sandbox.call('POST', '/__sandbox/webhooks/test')).status).toBe(200);
    samples = await scrape(sandbox);
    expect(valueOf(samples, 'sandbox_webhook_attempts_total', { outcome: 'http_error' })).toBe(1);
    expect(valueOf(samples, 'sandbox_webhook_attempts_total', { outcome: 'delivered' })).toBe(1);
  });

  it('counts a client with several tokens (a partner and a read_only one) once in the outbox', async () => {
    receiver = await Receiver.start();
    sandbox = await webhookSandbox(receiver.url, {
      clients: [
        { token: TOKEN_A, id: 'client-a', webhook: { url: receiver.url } },
        { token: TOKEN_B, id: 'client-b' },
        { token: 'reader-of-client-b', id: 'client-b', role: 'read_only' },
      ],
    });
    await createOrders(sandbox, 1, {}, TOKEN_B); // client B has no URL: its one delivery is held
    await sandbox.advance(60_000);
    expect(valueOf(await scrape(sandbox), 'sandbox_webhook_outbox', { status: 'paused' })).toBe(1);
  });

  it('keeps the counters of two sandboxes in one process apart', async () => {
    sandbox = await testSandbox();
    const other = await testSandbox();
    try {
      await createOrders(sandbox, 1);
      expect(valueOf(await scrape(sandbox), 'sandbox_orders_created_total')).toBe(1);
      expect(valueOf(await scrape(other), 'sandbox_orders_created_total')).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('the metrics guard (where an admin token is configured)', () => {
  let services: Services | undefined;
  afterEach(async () => {
    if (services) {
      await stopServices(services, []);
      await services.storage.close();
    }
    services = undefined;
  });

  it('answers what the guard throws, with the error envelope, and the metrics when it lets the request through', async () => {
    services = await buildServices(defaultTestOptions);
    const guard = (input: { headers: Record<string, unknown> }) => {
      if (input.headers['authorization'] !== 'Bearer admin') throw new Forbidden('Only the admin token may read the metrics.');
    };
    const app = createApp(services, [metricsModule(services, { guard })]);
    const refused = await supertest(app).get('/__sandbox/metrics').set('Authorization', 'Bearer token-client-a');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, message: 'Only the admin token may read the metrics.' });
    const answered = await supertest(app).get('/__sandbox/metrics').set('Authorization', 'Bearer admin');
    expect(answered.status).toBe(200);
    expect(parsePrometheus(answered.text).length).toBeGreaterThan(0);
  });

  it("shows the store's gauges as NaN, spelt as the exposition format spells it, while the store cannot be read", async () => {
    services = await buildServices(defaultTestOptions);
    services.storage.orders.count = async () => Promise.reject(new Unavailable('The database cannot be reached right now.'));
    const scraped = await supertest(createApp(services, [metricsModule(services)])).get('/__sandbox/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.text).toMatch(/^sandbox_store_up 0$/m);
    for (const gauge of ['sandbox_orders', 'sandbox_jobs_pending']) expect(scraped.text, gauge).toMatch(new RegExp(`^${gauge} NaN$`, 'm'));
    expect(scraped.text).not.toMatch(/ Nan$/m);
  });
});

describe('GET /__sandbox/metrics with an admin token configured', () => {
  it('answers 401 without a token, 403 to a partner token, and the metrics to the admin token', async () => {
    sandbox = await testSandbox({ adminTokens: ['metrics-admin-token'] });
    const none = await sandbox.call('GET', '/__sandbox/metrics', { token: null });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    const partner = await sandbox.call('GET', '/__sandbox/metrics', { token: TOKEN_B });
    expect(partner.status).toBe(403);
    expect(partner.body.errors).toEqual([{ field: 'header.authorization', message: 'is not an admin token' }]);
    const admin = await sandbox.call('GET', '/__sandbox/metrics', { token: 'metrics-admin-token' });
    expect(admin.status).toBe(200);
    expect(valueOf(parsePrometheus(admin.text), 'sandbox_orders_created_total')).toBe(0);
  });
});

describe('GET /__sandbox/metrics under a partner that answers itself every status', () => {
  it('labels statuses an operation does not document by their class, so fault rules cannot grow the series without bound', async () => {
    sandbox = await testSandbox();
    for (const status of [299, 418, 451, 599]) {
      expect((await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'listCouriers' }, action: { type: 'status', status } } })).status).toBe(201);
      // Not through call(): an injected 418 is not the spec's answer, on purpose.
      expect((await supertest(sandbox.app).get('/v1/couriers').set('Authorization', 'Bearer token-client-a')).status).toBe(status);
    }
    await eventually(sandbox, 'sandbox_http_requests_total', { operation: 'listCouriers', status: '4xx' }).toBe(2);
    const series = (await scrape(sandbox)).filter((s) => s.name === 'sandbox_http_requests_total' && s.labels.operation === 'listCouriers');
    expect(series.map((s) => s.labels.status).sort()).toEqual(['2xx', '4xx', '5xx']);
  });
});
