import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import type { Report } from '../../src/report/grade.js';
import { createRequest } from '../support/orders.js';
import { runCli } from '../support/cli.js';
import { TestClient } from './clients.js';

const DAY = 24 * 60 * 60_000;
const tokens = { careful: 'token-careful', careless: 'token-careless', other: 'token-other' };

let sandbox: Sandbox;
let careful: TestClient;
let careless: TestClient;

async function report(token: string, format = 'json'): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(`${sandbox.url}/__sandbox/report?format=${format}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}
const jsonReport = async (token: string): Promise<Report> => JSON.parse((await report(token)).text) as Report;
const statuses = (r: Report) => Object.fromEntries(r.items.map((i) => [i.id, i.status]));

/** The same run for a client: every documented operation, its errors, faults, webhooks with chaos, tracking, checks. */
async function firstPhase(client: TestClient): Promise<void> {
  expect((await client.call('POST', '/__sandbox/runs', { name: 'ci-20' })).status).toBe(201);
  expect((await client.createCodes(['DUP-1'], { 'x-sandbox-webhook-chaos': 'duplicate' })).status).toBe(201);
  expect((await client.createCodes(['SIG-1'], { 'x-sandbox-webhook-chaos': 'duplicate,bad_signature' })).status).toBe(201);
  expect((await client.createCodes(['MULTI-1', 'MULTI-2'])).status).toBe(201);
  const invalid = createRequest(1);
  invalid.items[0]!.item_weight = 'heavy';
  expect((await client.call('POST', '/v1/order', invalid)).status).toBe(400);
  expect((await client.call('POST', '/v1/order', createRequest(1, { courier_code: 'sicepat' }))).status).toBe(403);
  expect((await client.call('GET', '/v1/order/tracking/not_an_awb!')).status).toBe(400);
  // A 503 with Retry-After, a dropped connection, a request held until the client gives up.
  await client.call('POST', '/__sandbox/faults', { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 503, headers: { 'Retry-After': '1' } }, times: 1 });
  expect((await client.createCodes(['AFTER-503'])).status).toBe(201);
  await client.call('POST', '/__sandbox/faults', { match: { operation_id: 'createOrder' }, action: { type: 'reset' }, times: 1 });
  expect((await client.createCodes(['AFTER-RESET'])).status).toBe(201);
  const magic = ((await client.call('GET', '/__sandbox/scenarios')).body as Array<{ name: string; magic_awb: string }>).find((s) => s.name === 'delivered')!.magic_awb;
  await client.call('POST', '/__sandbox/faults', { match: { operation_id: 'trackOrder' }, action: { type: 'hang' }, times: 1 });
  expect((await client.track(magic, 300)).status).toBe(200);
}

beforeAll(async () => {
  sandbox = await createSandbox({
    port: 0,
    clock: 'manual',
    seed: '20',
    awbDelay: '1m',
    logLevel: 'silent',
    clients: [
      { token: tokens.careful, id: 'careful', couriers: ['jne'] },
      { token: tokens.careless, id: 'careless', couriers: ['jne'] },
      { token: tokens.other, id: 'other' },
    ],
  });
  careful = new TestClient('careful', sandbox.url, tokens.careful);
  careless = new TestClient('careless', sandbox.url, tokens.careless);
  await careful.start();
  await careless.start();
  await firstPhase(careful);
  await firstPhase(careless);
  // The AWBs are generated and announced; the careless client tracks inside its webhook handler.
  await sandbox.clock.advance(2 * 60_000);
  await sandbox.clock.advance(60 * 60_000); // the retry of the webhook the receivers failed
  expect([...careful.awbs.keys()].sort()).toEqual(['AFTER-503', 'AFTER-RESET', 'DUP-1', 'MULTI-1', 'MULTI-2', 'SIG-1']);
  for (const awb of careful.awbs.values()) await careful.track(awb); // 404: no pick-up scan yet
  await sandbox.clock.advance(4 * DAY);
  for (const client of [careful, careless]) {
    for (const awb of client.awbs.values()) expect((await client.track(awb)).status).toBe(200);
    expect((await client.call('POST', '/__sandbox/checks')).status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await careful?.stop();
  await careless?.stop();
  await sandbox?.close();
});

describe('GET /__sandbox/report: a careful and a careless client through the same run', () => {
  const differ = ['error.create-400', 'error.create-403', 'error.tracking-400', 'error.tracking-404', 'webhook.bad-signature', 'tracking.after-webhook', 'fault.retry-after', 'check.bad-signature', 'check.stale-timestamp'];

  it('grades every graded item of the careful client handled: 100%', async () => {
    const r = await jsonReport(tokens.careful);
    expect(r.run?.name).toBe('ci-20');
    const notHandled = r.items.filter((i) => i.graded && i.status !== 'handled').map((i) => `${i.id}: ${i.detail}`);
    expect(notHandled).toEqual([]);
    expect(r.summary.handled_percent).toBe(100);
    expect(r.items.filter((i) => !i.graded).every((i) => i.status === 'not_graded')).toBe(true);
  });

  it('tells the careless client apart on every item where it behaves differently, naming why', async () => {
    const r = await jsonReport(tokens.careless);
    const notHandled = r.items.filter((i) => i.status === 'not_handled').map((i) => i.id);
    expect(notHandled.sort()).toEqual([...differ].sort());
    expect(r.items.find((i) => i.id === 'fault.retry-after')?.detail).toMatch(/Missed/);
    expect(r.checks.find((c) => c.id === 'bad_signature')).toMatchObject({ status: 'failed', expected: '4xx', got: '200' });
    expect(r.summary.handled_percent).toBeLessThan(100);
  });

  it('agrees on the rest', async () => {
    const [a, b] = [statuses(await jsonReport(tokens.careful)), statuses(await jsonReport(tokens.careless))];
    const same = Object.keys(a).filter((id) => !differ.includes(id));
    expect(same.length).toBeGreaterThan(10);
    for (const id of same) expect({ id, status: b[id] }).toEqual({ id, status: a[id] });
  });
});

describe('GET /__sandbox/report?format=junit|html', () => {
  it('answers JUnit XML that parses, with one test case per catalogue item: failures for not handled, skipped for not exercised and not graded', async () => {
    const [junit, json] = [await report(tokens.careless, 'junit'), await jsonReport(tokens.careless)];
    expect(junit.type).toMatch(/xml/);
    expect(XMLValidator.validate(junit.text)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testcase' || name === 'testsuite' }).parse(junit.text) as {
      testsuites: { tests: string; failures: string; testsuite: Array<{ testcase: Array<{ name: string; failure?: unknown; skipped?: unknown }> }> };
    };
    const cases = doc.testsuites.testsuite[0]!.testcase;
    expect(cases).toHaveLength(json.items.length);
    expect(cases.map((c) => c.name.split(':')[0])).toEqual(json.items.map((i) => i.id));
    expect(cases.filter((c) => c.failure !== undefined)).toHaveLength(json.summary.not_handled);
    expect(cases.filter((c) => c.skipped !== undefined)).toHaveLength(json.summary.not_exercised + json.summary.not_graded);
    expect(Number(doc.testsuites.failures)).toBe(json.summary.not_handled);
    // A failure names the requests that missed it, as the CI log shows them.
    const failure = cases.find((c) => c.name.startsWith('error.create-400:'))!.failure as { '#text': string };
    expect(failure['#text']).toMatch(/Last missed:\n- \S+Z sent again unchanged: POST \/v1\/order \(order code "[^"\n]+"\) → 400/);
  });

  it('answers a self-contained HTML page that shows a run name as text', async () => {
    const other = new TestClient('careful', sandbox.url, tokens.other);
    expect((await other.call('POST', '/__sandbox/runs', { name: '<img src="https://evil.example/x.png" onerror="alert(1)">' })).status).toBe(201);
    // A refused create sent again unchanged, its order code markup: the missed request is named, as text.
    const hostile = createRequest(1);
    hostile.items[0]!.item_weight = 'heavy';
    hostile.items[0]!.order_code = '<script>alert(1)</script>';
    for (let i = 0; i < 2; i += 1) expect((await other.call('POST', '/v1/order', hostile)).status).toBe(400);
    const page = await report(tokens.other, 'html');
    expect(page.type).toMatch(/text\/html/);
    expect(page.text).toContain('&lt;img src=&quot;https://evil.example/x.png&quot;');
    expect(page.text).toMatch(/Last missed:<\/small><ul><li><small>\S+Z<\/small> sent again unchanged: POST \/v1\/order \(order code &quot;&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;\) → 400<\/li><\/ul>/);
    expect(page.text).not.toMatch(/<img|<script|<link/i);
    expect(page.text).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    const mine = await report(tokens.careful, 'html');
    expect(mine.text).toContain('100%');
    expect(mine.text).not.toMatch(/(src|href)\s*=/i);
  });

  it('answers 400 naming format for a format it does not have', async () => {
    const res = await report(tokens.careful, 'pdf');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ success: false, errors: [expect.objectContaining({ field: expect.stringContaining('format') })] });
  });
});

describe('shipping-sandbox report --fail-under', () => {
  it('exits non-zero for the careless client and 0 for a client that meets every item', async () => {
    const [bad, good] = await Promise.all([
      runCli(['report', '--url', sandbox.url, '--token', tokens.careless, '--fail-under', '100', '--format', 'junit']),
      runCli(['report', '--url', sandbox.url, '--token', tokens.careful, '--fail-under', '100']),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('<testsuites');
    expect(bad.stderr).toMatch(/below --fail-under 100/);
    expect(good.code).toBe(0);
    expect((JSON.parse(good.stdout) as Report).summary.handled_percent).toBe(100);
  }, 30_000);
});

describe('reports are per client', () => {
  it('never shows another client’s traffic, and a reset or a new run starts an empty report', async () => {
    const before = await jsonReport(tokens.careful);
    const other = new TestClient('careless', sandbox.url, tokens.other);
    expect((await other.call('POST', '/__sandbox/runs', { name: 'other-run' })).status).toBe(201);
    expect((await other.createCodes(['X-1', 'X-2'])).status).toBe(201);
    expect((await other.call('GET', '/v1/order/tracking/nothing-here')).status).toBe(404);
    const theirs = await jsonReport(tokens.other);
    expect(statuses(theirs)).toMatchObject({ 'op.create-order': 'handled', 'create.multi-item': 'handled', 'error.tracking-404': 'not_handled', 'webhook.awb-acknowledged': 'not_exercised' });
    expect(theirs.summary.handled).toBe(2);
    const after = await jsonReport(tokens.careful);
    expect(after.items).toEqual(before.items);
    expect(after.events).toEqual(before.events);

    expect((await careless.call('POST', '/__sandbox/runs', { name: 'second' })).status).toBe(201);
    const fresh = await jsonReport(tokens.careless);
    expect(fresh).toMatchObject({ run: { name: 'second' }, checks: [], events: [], summary: { handled: 0, not_handled: 0 } });
    expect((await other.call('POST', '/__sandbox/reset')).status).toBe(200);
    expect(await jsonReport(tokens.other)).toMatchObject({ run: null, events: [], summary: { handled: 0, not_handled: 0 } });
    expect((await jsonReport(tokens.careful)).summary.handled_percent).toBe(100);
  });

  it('answers 400 naming name for a run without one', async () => {
    const res = await careful.call('POST', '/__sandbox/runs', {});
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, errors: [expect.objectContaining({ field: 'name' })] });
  });
});
