import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTrigger } from '../../src/client/trigger.js';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { heldServer, timed } from '../support/held-server.js';
import { Receiver } from '../webhooks/receiver.js';
import { isRefused, TestListener } from '../support/listener.js';

const TOKEN = 'trigger-command-token';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

let sandbox: Sandbox;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
  sandbox = await createSandbox({ port: 0, data: ':memory:', clock: 'manual', tokens: [TOKEN], webhookUrl: receiver.url, webhookSecret: SECRET, logLevel: 'silent' });
});
afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});

async function trigger(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runTrigger([...argv, '--url', sandbox.url, '--token', TOKEN], (t) => void (stdout += t), (t) => void (stderr += t));
  return { code, stdout, stderr };
}
const orderCount = async () => ((await (await fetch(`${sandbox.url}/__sandbox/orders`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { total: number }).total;

describe('shipping-sandbox trigger', () => {
  it('fires awb.generated on a new order and prints the order, the delivery id the receiver got, and the outcome', async () => {
    const { code, stdout } = await trigger('awb.generated');
    expect(code).toBe(0);
    const webhook = receiver.received.at(-1)!;
    const payload = new Webhook(SECRET).verify(webhook.body, webhook.headers as Record<string, string>) as { order_no: string; awb: string };
    expect(stdout).toContain(`order     ${payload.order_no}  awb_generated`);
    expect(stdout).toContain(`AWB ${payload.awb}`);
    expect(stdout).toContain(`delivery  ${webhook.id}  awb.generated  to default  delivered`);
    expect(stdout).toMatch(/^outcome   delivered$/m);
  });

  it('plays an order up to a tracking step given by --scenario and --to-step', async () => {
    const { code, stdout } = await trigger('tracking.step', '--scenario', 'returned', '--to-step', 'attempt_failed_2');
    expect(code).toBe(0);
    expect(stdout).toMatch(/delivery_failed {2}scenario returned .* 9 tracking entries/);
  });

  it('exits 1 naming the field for an unknown event (the sandbox refused it), and creates nothing', async () => {
    const before = await orderCount();
    const { code, stderr } = await trigger('awb.exploded');
    expect(code).toBe(1);
    expect(stderr).toMatch(/^shipping-sandbox trigger: the sandbox answered 400: .*\n  event: /);
    expect(await orderCount()).toBe(before);
  });

  it('exits 1 with a hint when --url is a server that is no sandbox (a webhook receiver\'s port), its answer no error envelope', async () => {
    const other = createServer((_req, res) => res.writeHead(400).end());
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      let stderr = '';
      const code = await runTrigger(['awb.generated', '--url', `http://127.0.0.1:${(other.address() as AddressInfo).port}`, '--token', TOKEN], () => undefined, (t) => void (stderr += t));
      expect(code).toBe(1);
      expect(stderr).toBe("shipping-sandbox trigger: the sandbox answered 400 with an empty body (not the sandbox's error envelope: is --url a shipping sandbox, or a proxy in front of one?)\n");
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it.each([['--order'], ['--scenario'], ['--to-step'], ['--client']])('exits 2 naming %s when it is empty (an unset variable), and creates nothing', async (flag) => {
    const before = await orderCount();
    const { code, stderr } = await trigger('awb.generated', flag, '');
    expect(code).toBe(2);
    expect(stderr).toContain(`${flag}`);
    expect(stderr).toContain('must not be empty');
    expect(await orderCount()).toBe(before);
  });

  it('exits 2 saying --to-step is required when tracking.step is given without it, and creates nothing', async () => {
    const before = await orderCount();
    const { code, stderr } = await trigger('tracking.step', '--scenario', 'returned');
    expect(code).toBe(2);
    expect(stderr).toBe('shipping-sandbox trigger: --to-step is required with tracking.step: the step to play up to, by key or number (1 is the first)\n');
    expect(await orderCount()).toBe(before);
  });

  it('exits 2 when what answers is no sandbox (a 200 that is not JSON)', async () => {
    const page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a proxy</html>'));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    try {
      let stderr = '';
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
      expect(await runTrigger(['awb.generated', '--url', url, '--token', TOKEN], () => {}, (t) => void (stderr += t))).toBe(2);
      expect(stderr).toMatch(/^shipping-sandbox trigger: http:\/\/127\.0\.0\.1:\d+\/? answered 200 with no JSON: is it a shipping sandbox\?/);
    } finally {
      page.close();
    }
  });

  it('exits 2 when the sandbox cannot be reached', async () => {
    let stderr = '';
    expect(await runTrigger(['awb.generated', '--url', 'http://127.0.0.1:9', '--token', TOKEN], () => {}, (t) => void (stderr += t))).toBe(2);
    expect(stderr).toMatch(/^shipping-sandbox trigger: fetch failed/);
  });

  it('exits 2 naming the flag when --url is missing', async () => {
    let stderr = '';
    expect(await runTrigger(['awb.generated', '--token', TOKEN], () => {}, (t) => void (stderr += t))).toBe(2);
    expect(stderr).toMatch(/--url/);
  });
});

describe('shipping-sandbox trigger --timeout', () => {
  it('exits 2 within --timeout saying nothing answered, when what listens at --url takes the connection and never answers', async () => {
    const silent = await heldServer();
    try {
      const { code, stdout, stderr, ms } = await timed((out, err) => runTrigger(['awb.generated', '--url', silent.url, '--token', TOKEN, '--timeout', '200ms'], out, err));
      expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `shipping-sandbox trigger: no answer from ${silent.url} within 200ms; the event may have fired all the same: look for it with \`shipping-sandbox deliveries list\` before triggering it again\n` });
      expect(silent.requests).toEqual(['POST /__sandbox/events/trigger']);
      expect(ms).toBeGreaterThan(150);
      expect(ms).toBeLessThan(2000);
    } finally {
      await silent.close();
    }
  });

  it('counts the body too: exits 2 when the headers come but the body never ends', async () => {
    const dribbling = await heldServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"event":');
    });
    try {
      const { code, stderr, ms } = await timed((out, err) => runTrigger(['awb.generated', '--url', dribbling.url, '--token', TOKEN, '--timeout', '200ms'], out, err));
      expect({ code, stderr }).toEqual({ code: 2, stderr: `shipping-sandbox trigger: no answer from ${dribbling.url} within 200ms; the event may have fired all the same: look for it with \`shipping-sandbox deliveries list\` before triggering it again\n` });
      expect(ms).toBeLessThan(2000);
    } finally {
      await dribbling.close();
    }
  });

  it.each([
    ['0', /must be a duration above 0 and at most 24h, e\.g\. 30s, 500ms or 2m/],
    ['-1', /must be a duration above 0/],
    ['abc', /must be a duration above 0/],
    ['', /must be a duration above 0/],
    ['25h', /at most 24h/],
    ['30', /has no unit: use for example 30s, 500ms or 2m \(a bare number would be milliseconds\)/],
  ])('exits 2 naming --timeout for %j, and creates nothing', async (value, message) => {
    const before = await orderCount();
    const { code, stdout, stderr } = await trigger('awb.generated', '--timeout', value);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toContain(`option '--timeout <duration>' argument '${value}' is invalid.`);
    expect(stderr).toMatch(message);
    expect(await orderCount()).toBe(before);
  });

  it('lists --timeout in its help with its default, 30s', async () => {
    let stdout = '';
    expect(await runTrigger(['--help'], (t) => void (stdout += t), () => {})).toBe(0);
    expect(stdout).toMatch(/--timeout <duration>[\s\S]*\(default: 30s\)/);
  });

  it('answers as without it when the sandbox answers in time', async () => {
    const { code, stdout, stderr } = await trigger('awb.generated', '--timeout', '10s');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^outcome   delivered$/m);
  });
});

describe('shipping-sandbox trigger with several endpoints', () => {
  it('names the endpoint of each delivery', async () => {
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const made = await fetch(`${sandbox.url}/__sandbox/webhooks/endpoints`, { method: 'POST', headers, body: JSON.stringify({ url: `${receiver.url}/second`, events: ['awb.generated'] }) });
    const endpointId = ((await made.json()) as { id: string }).id;
    try {
      const { code, stdout } = await trigger('awb.generated');
      expect(code).toBe(0);
      expect(stdout).toMatch(/^delivery {2}msg_\S+ {2}awb\.generated {2}to default {2}delivered$/m);
      expect(stdout).toMatch(new RegExp(`^delivery {2}msg_\\S+ {2}awb\\.generated {2}to ${endpointId} {2}delivered$`, 'm'));
    } finally {
      await fetch(`${sandbox.url}/__sandbox/webhooks/endpoints/${endpointId}`, { method: 'DELETE', headers });
    }
  });
});

describe('shipping-sandbox trigger with a listener', () => {
  it('names a listener\'s endpoint listener:NAME, as deliveries list does, whether it forwarded the delivery or holds it', async () => {
    const opened = await TestListener.open(sandbox.url, { token: TOKEN, name: 'laptop', events: 'awb.generated', forwardTo: `${receiver.url}/laptop` });
    if (isRefused(opened)) throw new Error(`listen refused: ${opened.status}`);
    try {
      const forwarded = await trigger('awb.generated');
      expect(forwarded.code).toBe(0);
      expect(forwarded.stdout).toMatch(/^delivery {2}msg_\S+ {2}awb\.generated {2}to listener:laptop {2}delivered$/m);
      expect(forwarded.stdout).toMatch(/^delivery {2}msg_\S+ {2}awb\.generated {2}to default {2}delivered$/m);
    } finally {
      await opened.close();
    }
    const held = await trigger('awb.generated');
    expect(held.code).toBe(0);
    expect(held.stdout).toMatch(/^delivery {2}msg_\S+ {2}awb\.generated {2}to listener:laptop {2}paused/m);
  });
});

describe('shipping-sandbox trigger --client, for a client id beyond ASCII', () => {
  it('acts for that client (X-Sandbox-Client sent as UTF-8) and refuses a control character as a bad flag', async () => {
    const wide = await createSandbox({ port: 0, data: ':memory:', clock: 'manual', clients: [{ token: 'sato-token', id: '佐藤' }, { token: 'other-token', id: 'other' }], adminTokens: ['wide-admin'], logLevel: 'silent' });
    try {
      let stdout = '';
      let stderr = '';
      const run = (client: string) => runTrigger(['order.cancelled', '--url', wide.url, '--token', 'wide-admin', '--client', client], (t) => void (stdout += t), (t) => void (stderr += t));
      expect([await run('佐藤'), stderr]).toEqual([0, '']);
      const orderNo = /^order {5}(\S+)/m.exec(stdout)![1];
      const mine = await fetch(`${wide.url}/__sandbox/orders/${orderNo}`, { headers: { authorization: 'Bearer sato-token' } });
      expect(mine.status).toBe(200);
      expect(await run('佐\u0007藤')).toBe(2);
      expect(stderr).toMatch(/'--client <id>' argument .* is invalid\. must not hold a line break or another control character/);
    } finally {
      await wide.close();
    }
  });
});
