import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import { Receiver, type Received } from './receiver.js';
import { createOrders, deliveries, startWebhookSandbox, stopWebhookSandbox, webhookSandbox } from './support.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The Standard Webhooks signature computed by hand, independent of the package. */
function verifyByHand(webhook: Received, secret: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${webhook.id}.${webhook.timestamp}.${webhook.body}`).digest();
  return webhook.signature.split(' ').some((part) => {
    const [version, value] = part.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

let receiver: Receiver;
let sandbox: TestSandbox;
beforeEach(async () => ({ receiver, sandbox } = await startWebhookSandbox({ webhookSecret: SECRET })));
afterEach(() => stopWebhookSandbox(sandbox, receiver));

describe('awb.generated webhook', () => {
  it('is signed so that the standardwebhooks verifier and a hand-written HMAC check both accept it', async () => {
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(1);
    const webhook = receiver.received[0]!;
    expect(webhook.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(SECRET).verify(webhook.body, webhook.headers as Record<string, string>)).toEqual(webhook.json);
    expect(verifyByHand(webhook, SECRET)).toBe(true);
    expect(verifyByHand(webhook, 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBe(false);
  });

  it('carries the documented payload fields, with generated_at in epoch seconds', async () => {
    const [orderNo] = await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    const state = await sandbox.call('GET', `/__sandbox/orders/${orderNo}`);
    expect(receiver.received[0]!.json).toEqual({
      event: 'awb.generated',
      batch_id: state.body.batch_id,
      order_no: orderNo,
      order_code: 'INV-1',
      courier_code: state.body.courier_code,
      awb: state.body.awb,
      generated_at: Math.floor(Date.parse(state.body.awb_generated_at) / 1000),
    });
    expect(receiver.received[0]!.headers['content-type']).toBe('application/json');
  });

  it('keeps the same webhook-id and body on every retry, with a fresh valid signature each time', async () => {
    receiver.respond = (_, i) => (i < 2 ? { status: 500 } : { status: 204 });
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000 + 5_000 + 30_000);
    expect(receiver.received).toHaveLength(3);
    const ids = new Set(receiver.received.map((r) => r.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^msg_/);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    for (const webhook of receiver.received) expect(verifyByHand(webhook, SECRET)).toBe(true);
    const [delivery] = await deliveries(sandbox);
    expect(delivery!.id).toBe([...ids][0]);
  });

  it('signs with the secret the control API shows when none was configured', async () => {
    await sandbox.close();
    sandbox = await webhookSandbox(receiver.url);
    const endpoint = await sandbox.call('GET', '/__sandbox/webhook');
    expect(endpoint.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    expect(verifyByHand(receiver.received[0]!, endpoint.body.secret)).toBe(true);
  });

  it('sends awb.failed with the reason when the scenario fails AWB generation', async () => {
    const [orderNo] = await createOrders(sandbox, 1, { 'X-Sandbox-Scenario': 'awb_failed' });
    await sandbox.advance(60_000);
    expect(receiver.received.map((r) => r.json)).toEqual([
      expect.objectContaining({ event: 'awb.failed', order_no: orderNo, order_code: 'INV-1', reason: expect.any(String), failed_at: expect.any(Number) }),
    ]);
    expect(new Webhook(SECRET).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>)).toBeTruthy();
  });

  it('sends order.cancelled when an order is cancelled, with its AWB (null before one)', async () => {
    const [before, after] = await createOrders(sandbox, 2);
    expect((await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: before, reason: 'changed mind' } })).status).toBe(200);
    await sandbox.advance(60_000);
    expect((await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: after, reason: 'changed mind' } })).status).toBe(200);
    await sandbox.advance(0);
    const cancelled = receiver.received.filter((r) => r.json.event === 'order.cancelled').map((r) => r.json);
    const awb = (await sandbox.call('GET', `/__sandbox/orders/${after}`)).body.awb;
    expect(cancelled).toEqual([
      expect.objectContaining({ order_no: before, awb: null, order_code: 'INV-1', cancelled_at: expect.any(Number) }),
      expect.objectContaining({ order_no: after, awb, order_code: 'INV-2', cancelled_at: expect.any(Number) }),
    ]);
    expect(receiver.received.map((r) => r.json.event)).toEqual(['order.cancelled', 'awb.generated', 'order.cancelled']);
  });
});
