import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Receiver } from '../webhooks/receiver.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

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
    // The duplicate under the valid message's webhook-id; the bad signature, the stale timestamp and the unknown order under ids of their own.
    const ids = receiver.received.map((w) => w.id);
    expect(ids[1]).toBe(ids[0]);
    expect(new Set([ids[0], ids[2], ids[3], ids[4]]).size).toBe(4);
    expect(Number(receiver.received[3]!.timestamp)).toBeLessThan(Date.now() / 1000 - 300);
    // A client without an AWB yet gets a made-up order for the valid step; both made-up orders look like real ones.
    const realLooking = { event: 'awb.generated', batch_id: expect.stringMatching(/^\d{12}$/), order_no: expect.stringMatching(/^\d{12}$/), courier_code: 'jne', awb: expect.stringMatching(/^JN\d{10}$/) };
    expect(receiver.received[0]!.json).toMatchObject(realLooking);
    expect(receiver.received[4]!.json).toMatchObject(realLooking);
    expect(receiver.received[4]!.json).not.toMatchObject({ order_no: (receiver.received[0]!.json as { order_no: string }).order_no });
    // Not deliveries: the delivery log stays empty.
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries')).body.deliveries).toEqual([]);
  });

  it('fails the signing steps of a receiver that never verifies, however it answers a webhook-id it has seen', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } });
    const seen = new Set<string>();
    receiver.respond = (webhook) => {
      if (seen.has(webhook.id)) return { status: 409 };
      seen.add(webhook.id);
      return { status: 204 };
    };
    const res = await sandbox.call('POST', '/__sandbox/checks');
    expect(res.body.checks.map((c: { id: string; status: string; got: string }) => [c.id, c.status, c.got])).toEqual([
      ['valid', 'passed', '204'],
      ['duplicate', 'failed', '409'],
      ['bad_signature', 'failed', '204'],
      ['stale_timestamp', 'failed', '204'],
      ['unknown_order', 'passed', '204'],
    ]);
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

  it('runs one check run of a client at a time: a second answers 429 with Retry-After meanwhile; another client runs its own', async () => {
    sandbox = await testSandbox({ webhookTimeout: '400ms' });
    receiver = await Receiver.start();
    receiver.respond = () => ({ status: 200, hang: true });
    const other = await Receiver.start();
    try {
      await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } });
      await sandbox.call('PUT', '/__sandbox/webhook', { token: TOKEN_B, body: { url: other.url } });
      const first = sandbox.call('POST', '/__sandbox/checks');
      while (receiver.received.length === 0) await new Promise((r) => setTimeout(r, 10));
      const second = await sandbox.call('POST', '/__sandbox/checks');
      expect(second.status).toBe(429);
      expect(second.headers['retry-after']).toBe('1');
      expect(second.body.message).toMatch(/check run of this client is still going/);
      expect((await sandbox.call('POST', '/__sandbox/checks', { token: TOKEN_B })).status).toBe(200);
      expect(other.received).toHaveLength(5);
      expect((await first).body).toMatchObject({ failed: 1, not_run: 4 });
      expect((await sandbox.call('POST', '/__sandbox/checks')).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('grades the endpoint named by endpoint_id with its own secret, and says which it graded', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    const main = await Receiver.start();
    try {
      await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: main.url } });
      const created = (await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: `${receiver.url}/second` } })).body as { id: string; secret: string };
      receiver.respond = (webhook) => {
        try {
          new Webhook(created.secret).verify(webhook.body, webhook.headers as Record<string, string>);
          return { status: 204 };
        } catch {
          return { status: 401 };
        }
      };
      const res = await sandbox.call('POST', `/__sandbox/checks?endpoint_id=${created.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ endpoint_id: created.id, passed: 5, failed: 0, not_run: 0 });
      expect(receiver.received).toHaveLength(5);
      expect(main.received).toEqual([]);
      // Without endpoint_id, the default endpoint as before.
      expect((await sandbox.call('POST', '/__sandbox/checks')).body.endpoint_id).toBe('default');
      expect(main.received).toHaveLength(5);
    } finally {
      await main.close();
    }
  });

  it('answers 404 for an endpoint the client does not have, 400 naming endpoint_id for a malformed one, and 409 for a disabled one', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    const unknown = await sandbox.call('POST', '/__sandbox/checks?endpoint_id=ep_nosuch');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/no webhook endpoint "ep_nosuch"/);
    const malformed = await sandbox.call('POST', '/__sandbox/checks?endpoint_id=..%2Fdefault');
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual([expect.objectContaining({ field: 'endpoint_id' })]);
    const twice = await sandbox.call('POST', '/__sandbox/checks?endpoint_id=default&endpoint_id=ep_a');
    expect(twice.status).toBe(400);
    expect(twice.body.errors).toEqual([{ field: 'endpoint_id', message: 'must be given once, as plain text' }]);
    // A bracketed form would otherwise read as no endpoint_id at all, and grade the default endpoint.
    for (const form of ['endpoint_id[]=ep_a', 'endpoint_id[x]=ep_a']) {
      const bracketed = await sandbox.call('POST', `/__sandbox/checks?${form}`);
      expect(bracketed.status).toBe(400);
      expect(bracketed.body.errors).toEqual([{ field: 'endpoint_id', message: 'must be given once, as plain text' }]);
    }
    // Another client's endpoint is not this client's.
    const theirs = (await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { token: TOKEN_B, body: { url: receiver.url } })).body.id as string;
    expect((await sandbox.call('POST', `/__sandbox/checks?endpoint_id=${theirs}`)).status).toBe(404);
    const mine = (await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: receiver.url } })).body.id as string;
    await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${mine}`, { body: { enabled: false } });
    const off = await sandbox.call('POST', `/__sandbox/checks?endpoint_id=${mine}`);
    expect(off.status).toBe(409);
    expect(off.body.message).toContain(`PATCH /__sandbox/webhooks/endpoints/${mine}`);
    expect(receiver.received).toEqual([]);
  });

  it('names the graded endpoint in the report, whose check items the run replaced', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    const id = (await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: receiver.url } })).body.id as string;
    expect((await sandbox.call('POST', `/__sandbox/checks?endpoint_id=${id}`)).status).toBe(200);
    const report = (await sandbox.call('GET', '/__sandbox/report')).body;
    expect(report.checks.map((c: { endpoint_id: string }) => c.endpoint_id)).toEqual(Array(5).fill(id));
    const item = report.items.find((i: { id: string }) => i.id === 'check.valid');
    expect(item).toMatchObject({ status: 'handled', detail: `Passed (endpoint ${id}): expected 2xx, got 200.` });
    const html = await sandbox.call('GET', '/__sandbox/report?format=html');
    expect(html.text).toContain(`<code>valid</code> at <code>${id}</code>: passed`);
  });

  it('answers 409 for an endpoint whose events filter leaves out awb.generated, and sends nothing', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    const id = (await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: receiver.url, events: ['order.cancelled'] } })).body.id as string;
    const res = await sandbox.call('POST', `/__sandbox/checks?endpoint_id=${id}`);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/does not take awb.generated/);
    expect(receiver.received).toEqual([]);
  });

  it('runs no more steps once the endpoint is deleted during the run, saying why', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    receiver.respond = () => ({ status: 200, delayMs: 200 });
    const id = (await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: receiver.url } })).body.id as string;
    const run = sandbox.call('POST', `/__sandbox/checks?endpoint_id=${id}`);
    while (receiver.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    expect((await sandbox.call('DELETE', `/__sandbox/webhooks/endpoints/${id}`)).status).toBe(200);
    const res = await run;
    expect(res.body).toMatchObject({ endpoint_id: id, passed: 1, failed: 0, not_run: 4 });
    expect(res.body.checks[1]).toMatchObject({ id: 'duplicate', status: 'not_run', got: `not run: the endpoint ${id} was deleted during the run` });
    expect(receiver.received).toHaveLength(1);
  });

  it('records nothing in the report when the client is reset during the run: 409, run them again', async () => {
    sandbox = await testSandbox();
    receiver = await Receiver.start();
    receiver.respond = () => ({ status: 200, delayMs: 300 });
    expect((await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } })).status).toBe(200);
    const run = sandbox.call('POST', '/__sandbox/checks');
    while (receiver.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    expect((await sandbox.call('POST', '/__sandbox/reset')).status).toBe(200);
    const res = await run;
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ success: false, message: expect.stringMatching(/reset during this check run: .* not recorded in the new report\. Run the checks again/) });
    expect((await sandbox.call('GET', '/__sandbox/report')).body.checks).toEqual([]);
    // A run after the reset is recorded as ever.
    expect((await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url } })).status).toBe(200);
    expect((await sandbox.call('POST', '/__sandbox/checks')).status).toBe(200);
    expect((await sandbox.call('GET', '/__sandbox/report')).body.checks).toHaveLength(5);
  });

  it('answers 409 saying how to set a URL when the client has none', async () => {
    sandbox = await testSandbox();
    const res = await sandbox.call('POST', '/__sandbox/checks');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ success: false, message: expect.stringMatching(/PUT \/__sandbox\/webhook/) });
  });
});
