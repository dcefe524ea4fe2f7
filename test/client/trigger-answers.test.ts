import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTrigger } from '../../src/client/trigger.js';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { heldServer, timed } from '../support/held-server.js';
import { isRefused, TestListener } from '../support/listener.js';

const TOKEN = 'trigger-answers-token';

/** A trigger's answer with one awb.generated delivery to `endpoint_id`, queued: its attempt not ended yet. */
const queuedAnswer = (endpointId: string) => ({
  event: 'awb.generated',
  order: { order_no: '512345678901', status: 'awb_generated', awb: 'JN0000000001', scenario: 'happy_path', history: [] },
  deliveries: [{ id: 'msg_1', event: 'awb.generated', endpoint_id: endpointId, status: 'queued', last_error: null, attempts: [] }],
  outcome: 'queued',
});

describe('shipping-sandbox trigger with a frozen listener', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ port: 0, data: ':memory:', clock: 'real', webhookTimeout: '1s', tokens: [TOKEN], logLevel: 'silent' });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it("waits out a frozen listener's attempt (the webhook timeout and the listener's margin) and prints how it ended", async () => {
    const frozen = await TestListener.open(sandbox.url, { token: TOKEN, name: 'frozen', events: 'awb.generated' });
    if (isRefused(frozen)) throw new Error(`listen refused: ${frozen.status}`);
    // A stopped process: the attempt arrives and nothing answers it.
    frozen.answer = () => new Promise<undefined>(() => {});
    try {
      const { code, stdout } = await timed((out, err) => runTrigger(['awb.generated', '--url', sandbox.url, '--token', TOKEN], out, err));
      expect(code).toBe(0);
      expect(stdout).toMatch(/^delivery {2}msg_\S+ {2}awb\.generated {2}to listener:frozen {2}pending {2}\(timed out after 1000 ms\)$/m);
    } finally {
      await frozen.kill();
    }
  });
});

describe('shipping-sandbox trigger when the endpoint list cannot be read', () => {
  it('shows each endpoint by its id alone, says why on stderr, and exits 0 (the event was fired)', async () => {
    const sandbox = await heldServer((req, res) => {
      if (req.url === '/__sandbox/events/trigger') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(queuedAnswer('ep_d689')));
      else res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, message: 'busy' }));
    });
    try {
      const { code, stdout, stderr } = await timed((out, err) => runTrigger(['awb.generated', '--url', sandbox.url, '--token', TOKEN], out, err));
      expect(code).toBe(0);
      expect(stdout).toMatch(/^delivery {2}msg_1 {2}awb\.generated {2}to ep_d689 {2}queued {2}\(its attempt had not ended when the sandbox answered; `shipping-sandbox deliveries list` shows how it ends\)$/m);
      expect(stderr).toBe('shipping-sandbox trigger: endpoints are shown by id: the list of endpoints could not be read (the sandbox answered 503: busy)\n');
    } finally {
      await sandbox.close();
    }
  });

  it('names a live listener listener:NAME when the list is read', async () => {
    const sandbox = await heldServer((req, res) => {
      const body = req.url === '/__sandbox/events/trigger' ? queuedAnswer('ep_d689') : { endpoints: [{ id: 'ep_d689', listener: 'laptop' }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    try {
      const { code, stdout, stderr } = await timed((out, err) => runTrigger(['awb.generated', '--url', sandbox.url, '--token', TOKEN], out, err));
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toMatch(/^delivery {2}msg_1 {2}awb\.generated {2}to listener:laptop {2}queued {2}\(still waiting for the listener's answer/m);
    } finally {
      await sandbox.close();
    }
  });
});

describe('shipping-sandbox trigger --timeout', () => {
  it.each([
    [[], '`shipping-sandbox deliveries list`'],
    [['--order', '512345678901'], '`shipping-sandbox deliveries list --order-no 512345678901`'],
    [['--client', 'acme', '--order', '512345678901'], '`shipping-sandbox deliveries list --client acme --order-no 512345678901`'],
  ])('exits 2 saying the event may have fired all the same, and where to look (%j)', async (flags, look) => {
    const silent = await heldServer();
    try {
      const { code, stderr } = await timed((out, err) => runTrigger(['awb.generated', ...flags, '--url', silent.url, '--token', TOKEN, '--timeout', '200ms'], out, err));
      expect({ code, stderr }).toEqual({ code: 2, stderr: `shipping-sandbox trigger: no answer from ${silent.url} within 200ms; the event may have fired all the same: look for it with ${look} before triggering it again\n` });
    } finally {
      await silent.close();
    }
  });
});
