import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { downPort, Receiver } from '../webhooks/receiver.js';

const TOKEN = 'e2e-webhooks';
const ROOT = new URL('../..', import.meta.url).pathname;

interface Running {
  child: ChildProcess;
  url: string;
}

/** Starts the CLI as a child process and resolves with its base URL once the banner says it listens. */
function startCli(data: string, webhookUrl: string): Promise<Running> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', '--port', '0', '--data', data, '--clock', 'manual', '--token', TOKEN, '--webhook-url', webhookUrl, '--awb-delay', '1m', '--seed', 'e2e', '--log-level', 'warn'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1]! });
    });
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${out}`)));
  });
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface LoggedDelivery {
  id: string;
  order_no: string;
  status: string;
  attempts: Array<{ n: number; status_code: number | null }>;
}

const deliveries = async (base: string) => (await call(base, 'GET', '/__sandbox/webhooks/deliveries?limit=1000')).body.deliveries as LoggedDelivery[];

const kill = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill(signal);
  });

describe('webhook deliveries across a SIGKILL (CLI child process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-restart-'));
  const data = join(dir, 'sandbox.json');
  let port: number;
  let receiver: Receiver | undefined;
  let second: Running | undefined;

  beforeAll(async () => {
    port = await downPort();
  });
  afterAll(async () => {
    if (second) await kill(second.child, 'SIGTERM');
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes every pending delivery after a restart on the same data: none lost, none repeated', async () => {
    const webhookUrl = `http://127.0.0.1:${port}/hooks`;
    const first = await startCli(data, webhookUrl);
    const created = await call(first.url, 'POST', '/v1/order', createRequest(5));
    expect(created.status).toBe(201);
    const orderNumbers = created.body.order_numbers as string[];
    expect((await call(first.url, 'POST', '/__sandbox/clock/advance', { ms: 60_000 })).status).toBe(200);

    const before = await deliveries(first.url);
    expect(before).toHaveLength(5);
    for (const d of before) {
      expect(d.status).toBe('pending');
      expect(d.attempts.map((a) => a.status_code)).toEqual([null]);
    }
    await kill(first.child, 'SIGKILL');

    receiver = await Receiver.start(port);
    second = await startCli(data, webhookUrl);
    expect((await call(second.url, 'POST', '/__sandbox/clock/advance', { ms: 5_000 })).status).toBe(200);

    expect(receiver.received).toHaveLength(5);
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(new Set(before.map((d) => d.id)));
    expect(new Set(receiver.received.map((r) => r.json.order_no))).toEqual(new Set(orderNumbers));
    const after = await deliveries(second.url);
    for (const d of after) {
      expect(d.status).toBe('delivered');
      expect(d.attempts.map((a) => [a.n, a.status_code])).toEqual([
        [1, null],
        [2, 200],
      ]);
    }

    await call(second.url, 'POST', '/__sandbox/clock/advance', { ms: 86_400_000 });
    expect(receiver.received).toHaveLength(5);
  });
});
