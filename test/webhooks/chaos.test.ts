import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOKEN_A, type TestSandbox } from '../support/sandbox.js';
import { Receiver, type Received } from './receiver.js';
import { createOrders, deliveries, startWebhookSandbox, stopWebhookSandbox, webhookSandbox } from './support.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const verifies = (w: Received): boolean => {
  try {
    new Webhook(SECRET).verify(w.body, w.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};
const chaos = (modes: string) => ({ 'X-Sandbox-Webhook-Chaos': modes });

let receiver: Receiver;
let sandbox: TestSandbox;
beforeEach(async () => ({ receiver, sandbox } = await startWebhookSandbox({ webhookSecret: SECRET })));
afterEach(() => stopWebhookSandbox(sandbox, receiver));

describe('X-Sandbox-Webhook-Chaos', () => {
  it('duplicate: a delivered webhook arrives a second time, same webhook-id and body, both validly signed', async () => {
    await createOrders(sandbox, 1, chaos('duplicate'));
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.id).toBe(receiver.received[0]!.id);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect(receiver.received.every(verifies)).toBe(true);
    const [delivery] = await deliveries(sandbox);
    expect(delivery).toMatchObject({ status: 'delivered', chaos: ['duplicate'] });
    expect(delivery!.attempts.map((a) => a.chaos)).toEqual([null, 'duplicate']);
    await sandbox.advance(3_600_000);
    expect(receiver.received).toHaveLength(2);
  });

  it('late: the first attempt waits 10 minutes of sandbox time; generated_at keeps the AWB time', async () => {
    const [orderNo] = await createOrders(sandbox, 1, chaos('late'));
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(0);
    const state = await sandbox.call('GET', `/__sandbox/orders/${orderNo}`);
    expect(state.body.awb).not.toBeNull();
    await sandbox.advance(10 * 60_000 - 1);
    expect(receiver.received).toHaveLength(0);
    await sandbox.advance(1);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.json.generated_at).toBe(Math.floor(Date.parse(state.body.awb_generated_at) / 1000));
  });

  it('out_of_order: the events of one minute are held and arrive newest first', async () => {
    const orders = await createOrders(sandbox, 3, chaos('out_of_order'));
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(0);
    await sandbox.advance(60_000);
    expect(receiver.received.map((r) => r.json.order_no)).toEqual([...orders].reverse());
  });

  it('bad_signature: once the message is acknowledged, it comes again under the same webhook-id with a forged signature', async () => {
    receiver.respond = (w) => (verifies(w) ? { status: 200 } : { status: 401, body: 'bad signature' });
    await createOrders(sandbox, 1, chaos('bad_signature'));
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(2);
    expect(verifies(receiver.received[0]!)).toBe(true);
    expect(verifies(receiver.received[1]!)).toBe(false);
    expect(receiver.received[1]!.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(receiver.received[1]!.id).toBe(receiver.received[0]!.id);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    const [delivery] = await deliveries(sandbox);
    expect(delivery!.status).toBe('delivered');
    expect(delivery!.attempts.map((a) => [a.chaos, a.status_code])).toEqual([
      [null, 200],
      ['bad_signature', 401],
    ]);
  });

  it('bad_signature after duplicate: a receiver that refuses a seen webhook-id, verifying nothing, refuses both copies, and the report does not credit the forged one', async () => {
    const seen = new Set<string>();
    receiver.respond = (w) => (seen.has(w.id) ? { status: 409 } : (seen.add(w.id), { status: 204 }));
    await createOrders(sandbox, 1, chaos('duplicate,bad_signature'));
    await sandbox.advance(60_000);
    const [delivery] = await deliveries(sandbox);
    expect(delivery!.attempts.map((a) => [a.chaos, a.status_code])).toEqual([
      [null, 204],
      ['duplicate', 409],
      ['bad_signature', 409],
    ]);
    const items = (await sandbox.call('GET', '/__sandbox/report')).body.items as Array<{ id: string; status: string }>;
    expect(items.find((i) => i.id === 'webhook.bad-signature')).toMatchObject({ status: 'not_handled' });
    expect(items.find((i) => i.id === 'webhook.duplicate')).toMatchObject({ status: 'not_handled' });
  });

  it('bad_signature on a create of its own: the report does not credit the forged copy of a receiver that refused a duplicate copy earlier in the run', async () => {
    const seen = new Set<string>();
    receiver.respond = (w) => (seen.has(w.id) ? { status: 409 } : (seen.add(w.id), { status: 204 }));
    await createOrders(sandbox, 1, chaos('duplicate'));
    await sandbox.advance(60_000);
    await createOrders(sandbox, 1, chaos('bad_signature'));
    await sandbox.advance(60_000);
    const forged = (await deliveries(sandbox)).flatMap((d) => d.attempts).filter((a) => a.chaos !== null);
    expect(forged.map((a) => [a.chaos, a.status_code])).toEqual([
      ['duplicate', 409],
      ['bad_signature', 409],
    ]);
    const items = (await sandbox.call('GET', '/__sandbox/report')).body.items as Array<{ id: string; status: string; detail: string }>;
    expect(items.find((i) => i.id === 'webhook.bad-signature')).toMatchObject({ status: 'not_handled' });
  });

  it('bad_signature: a receiver that refuses the first sight of any webhook-id, verifying nothing, takes the forged copy', async () => {
    const seen = new Set<string>();
    receiver.respond = (w) => (seen.has(w.id) ? { status: 200 } : (seen.add(w.id), { status: 409 }));
    await createOrders(sandbox, 1, chaos('bad_signature'));
    await sandbox.advance(60_000);
    await sandbox.advance(5_000); // the retry, signed right, is acknowledged; then the forged copy
    const [delivery] = await deliveries(sandbox);
    expect(delivery!.attempts.map((a) => [a.chaos, a.status_code])).toEqual([
      [null, 409],
      [null, 200],
      ['bad_signature', 200],
    ]);
  });

  it('bad_signature with duplicate: the duplicate, then the forged copy, both after the acknowledged message', async () => {
    receiver.respond = (w) => (verifies(w) ? { status: 200 } : { status: 401 });
    await createOrders(sandbox, 1, chaos('bad_signature,duplicate'));
    await sandbox.advance(60_000);
    const [delivery] = await deliveries(sandbox);
    expect(delivery!.attempts.map((a) => [a.chaos, a.status_code])).toEqual([
      [null, 200],
      ['duplicate', 200],
      ['bad_signature', 401],
    ]);
  });

  it('combines modes given comma-separated', async () => {
    await createOrders(sandbox, 1, chaos('late, duplicate'));
    await sandbox.advance(60_000 + 10 * 60_000);
    expect(receiver.received).toHaveLength(2);
    expect((await deliveries(sandbox))[0]!.chaos).toEqual(['duplicate', 'late']);
  });

  it('returns 400 naming the header for an unknown mode', async () => {
    const res = await sandbox.call('POST', '/v1/order', { body: (await import('../support/orders.js')).createRequest(1), headers: chaos('late,explode') });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'header.x-sandbox-webhook-chaos', message: expect.stringContaining('"explode"') }]);
  });

  it('leaves orders without the header alone', async () => {
    await createOrders(sandbox, 2);
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received.every(verifies)).toBe(true);
  });
});

describe('chaos per client', () => {
  it('applies webhook.chaos of the config file to every delivery of the client', async () => {
    await sandbox.close();
    sandbox = await webhookSandbox(receiver.url, {
      webhookSecret: SECRET,
      clients: [{ token: TOKEN_A, id: 'client-a', webhook: { url: receiver.url, chaos: ['duplicate'] } }],
    });
    expect((await sandbox.call('GET', '/__sandbox/webhook')).body.chaos).toEqual(['duplicate']);
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(2);
  });

  it('can be set at run time with PUT /__sandbox/webhook', async () => {
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url, chaos: ['late'] } });
    await createOrders(sandbox, 1);
    await sandbox.advance(60_000);
    expect(receiver.received).toHaveLength(0);
    await sandbox.advance(10 * 60_000);
    expect(receiver.received).toHaveLength(1);
  });

  it('refuses to start with an unknown mode in the config', async () => {
    await expect(webhookSandbox(receiver.url, { clients: [{ token: 'x', webhook: { chaos: ['explode'] } }] })).rejects.toThrow(/explode/);
  });
});
