import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTrigger } from '../../src/client/trigger.js';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { Receiver } from '../webhooks/receiver.js';

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
    expect(stdout).toContain(`delivery  ${webhook.id}  awb.generated  delivered`);
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

  it.each([['--order'], ['--scenario'], ['--to-step'], ['--client']])('exits 2 naming %s when it is empty (an unset variable), and creates nothing', async (flag) => {
    const before = await orderCount();
    const { code, stderr } = await trigger('awb.generated', flag, '');
    expect(code).toBe(2);
    expect(stderr).toContain(`${flag}`);
    expect(stderr).toContain('must not be empty');
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
