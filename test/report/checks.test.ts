import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Receiver } from '../webhooks/receiver.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = receiver = undefined;
});

describe('POST /__sandbox/checks', () => {
  it('sends the documented sequence, signed, and records what a verifying receiver answered', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } });
    const secret = (await sandbox.call('GET', '/__sandbox/webhook')).body.secret as string;
    receiver.respond = (webhook) => {
      try {
        new Webhook(secret).verify(webhook.body, webhook.headers as Record<string, string>);
        return { status: 204 };
      } catch {
        return { status: 401 };
      }
    };
    const res = await sandbox.call('POST', '/__sandbox/checks');
    expect(res.status).toBe(200);
    expect(res.body.checks.map((c: { id: string; status: string; got: string }) => [c.id, c.status, c.got])).toEqual([
      ['valid', 'passed', '204'],
      ['duplicate', 'passed', '204'],
      ['bad_signature', 'passed', '401'],
      ['stale_timestamp', 'passed', '401'],
      ['unknown_order', 'passed', '204'],
    ]);
    expect(receiver.received.map((w) => w.id)).toEqual([receiver.received[0]!.id, receiver.received[0]!.id, receiver.received[0]!.id, receiver.received[0]!.id, receiver.received[4]!.id]);
    expect(Number(receiver.received[3]!.timestamp)).toBeLessThan(Date.now() / 1000 - 300);
    expect(receiver.received[4]!.json).toMatchObject({ event: 'awb.generated' });
    // Not deliveries: the delivery log stays empty.
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries')).body.deliveries).toEqual([]);
  });

  it('marks the rest not run when the endpoint does not answer at all, and the report shows them not exercised', async () => {
    sandbox = await testSandbox();
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: 'http://127.0.0.1:9/hooks' } });
    const res = await sandbox.call('POST', '/__sandbox/checks');
    expect(res.body).toMatchObject({ passed: 0, failed: 1, not_run: 4 });
    expect(res.body.checks[0]).toMatchObject({ id: 'valid', status: 'failed', expected: '2xx', got: expect.stringMatching(/^no answer/) });
    const report = (await sandbox.call('GET', '/__sandbox/report')).body;
    const item = (id: string) => report.items.find((i: { id: string }) => i.id === id);
    expect(item('check.valid')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/expected 2xx, got no answer/) });
    expect(item('check.unknown-order')).toMatchObject({ status: 'not_exercised', detail: expect.stringMatching(/^Not run/) });
  });

  it('answers 409 saying how to set a URL when the client has none', async () => {
    sandbox = await testSandbox();
    const res = await sandbox.call('POST', '/__sandbox/checks');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ success: false, message: expect.stringMatching(/PUT \/__sandbox\/webhook/) });
  });
});
