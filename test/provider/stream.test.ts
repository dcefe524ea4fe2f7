import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RatesModule } from '../../src/app/modules/rates.js';
import { QUOTE_DELAY_MS } from '../../src/http/handlers/rates-stream.js';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { defaultTestOptions, TOKEN_A } from '../support/sandbox.js';
import { openStream, schemaValidator } from './sse.js';

let sandbox: Sandbox;
let stats: RatesModule['streams'];
beforeAll(async () => {
  sandbox = await createSandbox({ ...defaultTestOptions, port: 0 });
  stats = (sandbox.modules.find((m) => m.name === 'rates') as RatesModule).streams;
});
afterAll(() => sandbox.close());

const QUERY = 'origin=317101&destination=327301&weight=1.5&length=30&width=20&height=10';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('GET /v1/rates/shipping-fee/stream', () => {
  it('streams one quote event per courier, each as documented, then the done event', async () => {
    const document = sandbox.services.specs.provider.document;
    const quoteProblems = schemaValidator(document, 'CourierQuote');
    const doneProblems = schemaValidator(document, 'ShippingFeeDoneEvent');
    const arrivals: number[] = [];
    const started = Date.now();
    const stream = await openStream(`${sandbox.url}/v1/rates/shipping-fee/stream?${QUERY}`, TOKEN_A, () => arrivals.push(Date.now() - started));
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const events = await stream.done;

    expect(events.map((e) => e.event)).toEqual(['quote', 'quote', 'quote', 'quote', 'quote', 'done']);
    expect(events.slice(0, 5).map((e) => e.id)).toEqual(['1', '2', '3', '4', '5']);
    for (const event of events.slice(0, 5)) expect(quoteProblems(event.data)).toEqual([]);
    expect(doneProblems(events[5]!.data)).toEqual([]);
    expect(events[5]!.data).toEqual({ success: true, count: 5 });
    // Staggered: each quote is sent at least 50 ms after the previous one, so the n-th cannot
    // arrive before n x 50 ms (a busy machine may deliver two at once later, never earlier).
    for (let i = 0; i < 5; i += 1) expect(arrivals[i]!).toBeGreaterThanOrEqual((i + 1) * QUOTE_DELAY_MS.min - 5);
  });

  it('streams the same quotes as GET /v1/rates/shipping-fee', async () => {
    const stream = await openStream(`${sandbox.url}/v1/rates/shipping-fee/stream?${QUERY}`, TOKEN_A);
    const events = await stream.done;
    const json = await fetch(`${sandbox.url}/v1/rates/shipping-fee?${QUERY}`, { headers: { authorization: `Bearer ${TOKEN_A}` } });
    const body = (await json.json()) as { data: { couriers: unknown[] } };
    expect(events.filter((e) => e.event === 'quote').map((e) => e.data)).toEqual(body.data.couriers);
  });

  it('stops computing quotes for a client that disconnects', async () => {
    const before = stats.quotes;
    let computedAtDisconnect = -1;
    const stream = await openStream(`${sandbox.url}/v1/rates/shipping-fee/stream?${QUERY}`, TOKEN_A, (event, request) => {
      if (event.event === 'quote' && computedAtDisconnect < 0) {
        computedAtDisconnect = stats.quotes - before;
        request.destroy();
      }
    });
    expect(stats.open).toBe(1);
    const events = await stream.done;
    expect(events).toHaveLength(1);
    await sleep(800); // longer than the four remaining quotes would take (at most 4 × 149 ms)
    // The hang-up comes after the first quote (on a loaded machine, perhaps after the second was computed): at most the one
    // under way as it came is computed after it, not the rest of the five.
    expect(computedAtDisconnect).toBeGreaterThanOrEqual(1);
    expect(stats.quotes - before).toBeLessThanOrEqual(Math.min(computedAtDisconnect + 1, 3));
    expect(stats.open).toBe(0);
  });

  it('answers bad parameters with the JSON error before any event', async () => {
    const res = await fetch(`${sandbox.url}/v1/rates/shipping-fee/stream?origin=317101&destination=327301&weight=0`, {
      headers: { authorization: `Bearer ${TOKEN_A}` },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/json/);
    const body = await res.json();
    expect(sandbox.services.specs.provider.byId.get('streamShippingFee')!.validateResponse(400, body)).toEqual([]);
    expect(body).toMatchObject({ success: false, errors: [{ field: 'weight', message: 'must be above 0 (kg)' }] });
    expect(stats.open).toBe(0);
  });

  it('answers 401 without a token', async () => {
    const res = await fetch(`${sandbox.url}/v1/rates/shipping-fee/stream?${QUERY}`);
    expect(res.status).toBe(401);
  });
});

describe('GET /v1/rates/shipping-fee/stream under a fault rule', () => {
  it('is cut mid-stream by a reset after_ms rule, and the server stops working on it', async () => {
    const rule = await fetch(`${sandbox.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ match: { operation_id: 'streamShippingFee' }, action: { type: 'reset', after_ms: 170 } }),
    });
    expect(rule.status).toBe(201);
    const before = stats.quotes;
    const stream = await openStream(`${sandbox.url}/v1/rates/shipping-fee/stream?${QUERY}`, TOKEN_A);
    const events = await stream.done;
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events.length).toBeLessThan(5);
    expect(events.map((e) => e.event)).not.toContain('done');
    const computedAtCut = stats.quotes;
    await sleep(800); // longer than the remaining quotes would take
    expect(stats.quotes).toBe(computedAtCut);
    expect(stats.quotes - before).toBeLessThan(5);
    expect(stats.open).toBe(0);
  });
});
