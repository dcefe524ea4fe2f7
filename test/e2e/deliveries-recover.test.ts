import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';
import { runCli } from '../support/cli.js';
import { Receiver } from '../webhooks/receiver.js';

const TOKEN = 'token-recover';
let sandbox: Sandbox;
let receiver: Receiver;
let down = true;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sandbox.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const statuses = async () => ((await api('GET', '/__sandbox/webhooks/deliveries')).body.deliveries as Array<{ status: string }>).map((d) => d.status);

beforeAll(async () => {
  receiver = await Receiver.start();
  receiver.respond = () => (down ? { status: 503 } : { status: 200 });
  sandbox = await createSandbox({ port: 0, clock: 'manual', seed: 'recover', awbDelay: '1m', webhookRetries: '0', logLevel: 'silent', clients: [{ token: TOKEN, id: 'a', webhook: { url: receiver.url } }] });
  // Two deliveries failed while the receiver was down.
  expect((await api('POST', '/v1/order', createRequest(2))).status).toBe(201);
  await sandbox.clock.advance(60_000);
  expect(await statuses()).toEqual(['failed', 'failed']);
  down = false;
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
  await receiver?.close();
});

// Before recover, which delivers them: the list shows the two failed deliveries.
describe('shipping-sandbox deliveries list, through the real CLI', () => {
  it('prints the failed deliveries with the receiver’s 503', async () => {
    const { code, stdout, stderr } = await runCli(['deliveries', 'list', '--url', sandbox.url, '--token', TOKEN, '--status', 'failed']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +CREATED +EVENT +ORDER_NO +ENDPOINT +STATUS +ATTEMPTS +LAST ATTEMPT$/);
    expect(lines.slice(1).map((line) => line.split(/ {2,}/).slice(2).join(' '))).toEqual([expect.stringMatching(/^awb\.generated \d+ default failed 1 503$/), expect.stringMatching(/^awb\.generated \d+ default failed 1 503$/)]);
  });

  it('names both subcommands for an unknown one, exiting 2', async () => {
    const { code, stderr } = await runCli(['deliveries', 'show']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown command 'show'.*\n {2}shipping-sandbox deliveries list .*\n {2}shipping-sandbox deliveries recover /);
  });
});

describe('shipping-sandbox deliveries recover, through the real CLI', () => {
  it('queues the failed deliveries, which the background work then delivers', async () => {
    const { code, stdout, stderr } = await runCli(['deliveries', 'recover', '--url', sandbox.url, '--token', TOKEN, '--since', '2000-01-01T00:00:00Z']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^queued 2 failed deliveries created from 2000-01-01T00:00:00.000Z to now for another attempt/);
    await sandbox.clock.advance(0);
    expect(await statuses()).toEqual(['delivered', 'delivered']);
  });

  it('exits 1 with the sandbox’s field error for a window that ends before it starts', async () => {
    const { code, stderr } = await runCli(['deliveries', 'recover', '--url', sandbox.url, '--token', TOKEN, '--since', '2026-05-01T12:00:00Z', '--until', '2026-05-01T11:00:00Z']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/until: must not be before since/);
  });
});
