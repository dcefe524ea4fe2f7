import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSandbox } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { deepJson } from '../fuzz/values.js';

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
const figures: string[] = [];

describe('limits, each with a clear error', () => {
  it('items per request (--max-items): 400 naming items', async () => {
    sandbox = await testSandbox({ maxItems: 3 });
    expect((await sandbox.call('POST', '/v1/order', { body: createRequest(3) })).status).toBe(201);
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(4) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'items', message: 'must hold at most 3 entries' }]);
    figures.push('items 4 > 3: 400');
  });

  it('items per request (--max-items) above the spec\'s 100: the served spec lets the answer hold as many order numbers', async () => {
    sandbox = await testSandbox({ maxItems: 150 });
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(120) });
    expect(created.status).toBe(201);
    expect(created.body.order_numbers).toHaveLength(120);
    const schemas = (await sandbox.call('GET', '/__sandbox/openapi.json')).body.components.schemas;
    expect(schemas.CreateOrderRequest.properties.items.maxItems).toBe(150);
    expect(schemas.CreateOrderResponse.properties.order_numbers.maxItems).toBe(150);
  });

  it('body size (--body-limit): 413 naming the limit', async () => {
    sandbox = await testSandbox({ bodyLimit: '2kb' });
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(10) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, message: "The body is larger than this sandbox's limit of 2kb; send a smaller one, for example fewer items per request.", errors: [{ field: 'body', message: 'must be at most 2kb' }] });
    figures.push('body > 2kb: 413');
  });

  it('JSON nesting (64 levels): 400 naming body', async () => {
    sandbox = await testSandbox();
    const res = await sandbox.call('POST', '/__sandbox/faults', { body: `{"match":${deepJson(65, 'object')}}`, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'is nested deeper than 64 levels' }]);
    figures.push('nesting 66 > 64: 400');
    // Half a million brackets: refused from the raw bytes (400 naming body), never parsed; with no token, not even read (401).
    const deep = await sandbox.call('POST', '/v1/order', { body: '['.repeat(500_000), headers: { 'content-type': 'application/json' } });
    expect(deep.status).toBe(400);
    expect(deep.body.errors).toEqual([{ field: 'body', message: 'is nested deeper than 64 levels' }]);
    const anonymous = await sandbox.call('POST', '/v1/order', { token: null, body: '['.repeat(500_000), headers: { 'content-type': 'application/json' } });
    expect(anonymous.status).toBe(401);
  });

  it.each([
    // U+2200's bytes in UTF-16LE are 00 22: to a byte scan, a quote that puts the brackets after it inside a string.
    ['utf-16le', (text: string) => Buffer.from(text.replace('"note":""', '"note":"\u2200"'), 'utf16le')],
    // In UTF-7 a bracket can be +AFs-: no bracket byte at all (and decoding it cost ~0.3 s per MB).
    ['utf-7', (text: string) => Buffer.from(text.replaceAll('[', '+AFs-'))],
    // An alias the decoder takes for UTF-8, but not the one spelling the byte scan is for.
    ['utf-8.', (text: string) => Buffer.from(text)],
  ])('a body in charset %s: 415 naming the header, before it is decoded or parsed; the sandbox keeps serving', async (charset, encode) => {
    sandbox = await testSandbox();
    // Sent as a string of its bytes (supertest would turn a Buffer into JSON); every byte is below 0x80, so it goes out unchanged.
    const bytes = encode(`{"note":"","match":${deepJson(100_000, 'array')}}`);
    expect(bytes.every((byte) => byte < 0x80)).toBe(true);
    const res = await sandbox.call('POST', '/v1/order', { body: bytes.toString('latin1'), headers: { 'content-type': `application/json; charset=${charset}` } });
    expect(res.status).toBe(415);
    expect(res.body.errors).toEqual([{ field: 'header.content-type', message: 'charset must be utf-8' }]);
    expect(res.body.message).toContain(`got charset "${charset}"`);
    // Its journal entry and readiness report read the request: nothing overflowed.
    expect((await sandbox.call('GET', '/__sandbox/requests')).status).toBe(200);
    expect((await sandbox.call('GET', '/__sandbox/report')).status).toBe(200);
    // UTF-8, however the header spells it, is taken.
    for (const type of ['application/json; charset=UTF-8', 'application/json; charset="utf-8"', 'application/json; charset=utf8', 'application/json']) {
      expect((await sandbox.call('POST', '/v1/order', { body: JSON.stringify(createRequest(1)), headers: { 'content-type': type } })).status).toBe(201);
    }
  });

  it('header size (--max-header-size): 431 with the envelope, naming the limit', async () => {
    const server = await createSandbox({ clock: 'manual', tokens: ['t'], maxHeaderSize: 4_096 });
    try {
      const ok = await fetch(`${server.url}/__sandbox/health`, { headers: { 'x-note': 'x'.repeat(3_000) } });
      expect(ok.status).toBe(200);
      const res = await fetch(`${server.url}/__sandbox/health`, { headers: { 'x-note': 'x'.repeat(5_000) } });
      expect(res.status).toBe(431);
      expect(await res.json()).toEqual({ success: false, message: expect.stringContaining('4096 bytes'), errors: [{ field: 'header', message: 'too large' }] });
      figures.push('headers 5 KB > 4096 B: 431');
    } finally {
      await server.close();
    }
  });

  it('request journal (--journal-size): keeps the newest entries, says its size', async () => {
    sandbox = await testSandbox({ journalSize: 3 });
    for (let i = 0; i < 5; i++) await sandbox.call('GET', `/v1/order/tracking/SBXNOSUCH0${i}`);
    const res = await sandbox.call('GET', '/__sandbox/requests');
    expect(res.body.size).toBe(3);
    expect(res.body.requests.map((r: { path: string }) => r.path)).toEqual(['/v1/order/tracking/SBXNOSUCH02', '/v1/order/tracking/SBXNOSUCH03', '/v1/order/tracking/SBXNOSUCH04']);
    figures.push('journal 5 > 3: oldest 2 dropped');
  });

  it('webhook outbox (--outbox-size): a held delivery past the bound is kept as failed with "Outbox full", logged, and can be redelivered', async () => {
    const receiver = await Receiver.start();
    try {
      sandbox = await testSandbox({ outboxSize: 2 });
      const warn = vi.spyOn(sandbox.services.logger, 'warn');
      // Client B has no webhook URL: its deliveries are held, paused, in the outbox.
      await sandbox.call('POST', '/v1/order', { token: TOKEN_B, body: createRequest(3) });
      await sandbox.advance(60_000);
      const list = async () => (await sandbox!.call('GET', '/__sandbox/webhooks/deliveries', { token: TOKEN_B })).body.deliveries as Array<{ id: string; status: string; last_error: string | null }>;
      const log = await list();
      expect(log.map((d) => d.status).sort()).toEqual(['failed', 'paused', 'paused']);
      const full = log.find((d) => d.status === 'failed')!;
      expect(full.last_error).toMatch(/^Outbox full: this client already has 2 deliveries held for want of a webhook URL or a live endpoint \(--outbox-size\)/);
      expect(warn).toHaveBeenCalledWith(expect.objectContaining({ client: 'client-b', outbox_size: 2 }), expect.stringMatching(/^webhook outbox full/));

      await sandbox.call('PUT', '/__sandbox/webhook', { token: TOKEN_B, body: { url: receiver.url } });
      await sandbox.advance(0);
      const redelivered = await sandbox.call('POST', `/__sandbox/webhooks/deliveries/${full.id}/redeliver`, { token: TOKEN_B });
      expect(redelivered.body.status).toBe('delivered');
      expect((await list()).map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
      expect(receiver.received).toHaveLength(3);
      figures.push('outbox 3 > 2: 1 failed "Outbox full", redelivered');
    } finally {
      await receiver.close();
    }
  });

  it('prints its figures', () => {
    console.log(`[security:limits] ${figures.length} limits hit, each with its error: ${figures.join('; ')}`);
    expect(figures).toHaveLength(6);
  });
});
