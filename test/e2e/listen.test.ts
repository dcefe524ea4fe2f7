import type { ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, spawnCli, startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { TOKEN_A, TOKEN_B } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';

// Acceptance 1, 2 and 6 of issue 42, the real CLI twice as a partner runs it: the sandbox
// (manual clock, moved by an admin through the control API) at --webhook-targets public with
// two partners, and `shipping-sandbox listen` for partner A: the receiver on 127.0.0.1 is one
// the sandbox itself may not call. (Acceptance 3, replicas: test/replicas/listen.test.ts.)

const READER = 'token-reader';
const ADMIN = 'token-admin';
const AWB_DELAY = 60_000;
let sandbox: RunningCli & { clock: { advance: (ms: number) => Promise<void> } };
let folder: string;
let receiver: Receiver;
const running: ChildProcess[] = [];

beforeEach(async () => {
  receiver = await Receiver.start();
  folder = mkdtempSync(join(tmpdir(), 'e2e-listen-'));
  const config = join(folder, 'clients.json');
  writeFileSync(config, JSON.stringify({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: TOKEN_B, id: 'client-b' }, { token: READER, id: 'client-c', read_only: true }] }));
  const cli = await startCli(['--port', '0', '--host', '127.0.0.1', '--data', join(folder, 'sandbox.json'), '--config', config, '--admin-token', ADMIN, '--clock', 'manual', '--seed', 'e2e-listen', '--awb-delay', '1m', '--log-level', 'warn', '--webhook-targets', 'public', '--webhook-retries', '0,5s,30s']);
  // Every client's clock, as an admin moves them: partner B's AWBs are made too, so that they could reach A's listener.
  const advance = async (ms: number): Promise<void> => {
    const res = await fetch(`${cli.url}/__sandbox/clock/advance-all`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ ms }) });
    expect(res.status).toBe(200);
  };
  sandbox = Object.assign(cli, { clock: { advance } });
});
afterEach(async () => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  expect(await sandbox.stop('SIGTERM')).toBe(0);
  await receiver.close();
  rmSync(folder, { recursive: true, force: true });
});

function listen(token = TOKEN_A, extra: string[] = []): { child: ChildProcess; stdout: () => string; ended: Promise<{ code: number | null; stderr: string }> } {
  const child = spawnCli(['listen', '--url', sandbox.url, '--token', token, '--forward-to', `${receiver.url}/hooks`, '--name', 'laptop', '--events', 'awb.generated', ...extra], { SANDBOX_TOKENS: '' });
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const ended = new Promise<{ code: number | null; stderr: string }>((resolve) => child.once('close', (code) => resolve({ code, stderr })));
  return { child, stdout: () => stdout, ended };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function call(method: string, path: string, token = TOKEN_A, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${sandbox.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json() };
}

async function createOrders(count: number, token = TOKEN_A): Promise<string[]> {
  const res = await call('POST', '/v1/order', token, createRequest(count));
  expect(res.status).toBe(201);
  return res.body.order_numbers;
}

const secretOf = (stdout: string): string => /Signing secret: (whsec_\S+)/.exec(stdout)![1]!;
const listenerDeliveries = async (): Promise<any[]> => {
  const endpoints = (await call('GET', '/__sandbox/webhooks/endpoints')).body.endpoints as Array<{ id: string; listener: string | null }>;
  const id = endpoints.find((e) => e.listener === 'laptop')!.id;
  return (await call('GET', `/__sandbox/webhooks/deliveries?limit=1000&endpoint_id=${id}`)).body.deliveries;
};

describe('shipping-sandbox listen against the sandbox, through the real CLI', () => {
  it('100 orders of A give 100 signed AWB webhooks at the receiver; B\'s never reach it; 500 twice gets the retries on the schedule', async () => {
    // The sandbox itself may not call the receiver: the target policy refuses its address.
    const direct = await call('PUT', '/__sandbox/webhook', TOKEN_A, { url: `${receiver.url}/hooks` });
    expect(direct.status, JSON.stringify(direct.body)).toBe(400);
    const run = listen();
    await until('Ready', () => run.stdout().includes('Ready:'));
    const secret = secretOf(run.stdout());
    await createOrders(5, TOKEN_B);
    const orders: string[] = [];
    for (let i = 0; i < 10; i++) orders.push(...(await createOrders(10)));
    await sandbox.clock.advance(AWB_DELAY);
    await until('100 webhooks', () => receiver.received.length >= 100);
    const verifier = new Webhook(secret);
    const got = receiver.received.map((r) => verifier.verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature }) as { order_no: string });
    expect(new Set(got.map((g) => g.order_no))).toEqual(new Set(orders));
    await until('100 lines printed', () => (run.stdout().match(/awb\.generated .* → 200/g) ?? []).length === 100);

    receiver.received.length = 0;
    receiver.respond = (_w, i) => (i < 2 ? { status: 500, body: 'no' } : { status: 200, body: 'ok' });
    await createOrders(1);
    await sandbox.clock.advance(AWB_DELAY);
    await until('first attempt', () => receiver.received.length === 1);
    await sandbox.clock.advance(4_999);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toHaveLength(1);
    await sandbox.clock.advance(1);
    await until('second attempt', () => receiver.received.length === 2);
    await new Promise((r) => setTimeout(r, 200));
    await sandbox.clock.advance(30_000);
    await until('third attempt', () => receiver.received.length === 3);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
    await until('delivered', async () => (await listenerDeliveries()).some((d) => d.attempts.length === 3 && d.status === 'delivered'));
  }, 120_000);

  it('killed mid-burst and started again: every delivery arrives, none delivered without a 2xx, each attempt logged', async () => {
    const answered = new Set<string>();
    receiver.respond = (w) => {
      answered.add(w.id);
      return { status: 200, body: 'ok' };
    };
    const first = listen();
    await until('Ready', () => first.stdout().includes('Ready:'));
    for (let i = 0; i < 5; i++) await createOrders(10);
    const advancing = sandbox.clock.advance(AWB_DELAY);
    await until('some forwarded', () => answered.size >= 5);
    first.child.kill('SIGKILL');
    await first.ended;
    await advancing;
    const second = listen();
    await until('Ready again', () => second.stdout().includes('Ready:'));
    for (let i = 0; i < 40 && !(await listenerDeliveries()).every((d) => d.status === 'delivered'); i++) {
      await sandbox.clock.advance(5_000);
      await new Promise((r) => setTimeout(r, 250));
    }
    const logged = await listenerDeliveries();
    expect(logged).toHaveLength(50);
    for (const d of logged) {
      expect(d.status).toBe('delivered');
      expect(answered.has(d.id)).toBe(true);
      expect(d.attempts.at(-1).status_code).toBe(200);
      expect(d.attempts.every((a: { url: string }) => a.url === 'listener:laptop')).toBe(true);
    }
  }, 120_000);

  it('bad input changes nothing: a read_only token, an unknown event, a bad --forward-to', async () => {
    const reader = await runCli(['listen', '--url', sandbox.url, '--token', READER, '--forward-to', receiver.url], { SANDBOX_TOKENS: '' });
    expect(reader.code).toBe(1);
    expect(reader.stderr).toMatch(/403/);
    const event = await runCli(['listen', '--url', sandbox.url, '--token', TOKEN_A, '--forward-to', receiver.url, '--events', 'awb.nope'], { SANDBOX_TOKENS: '' });
    expect(event.code).toBe(2);
    const target = await runCli(['listen', '--url', sandbox.url, '--token', TOKEN_A, '--forward-to', 'localhost:3000'], { SANDBOX_TOKENS: '' });
    expect(target.code).toBe(2);
    expect((await call('GET', '/__sandbox/webhooks/endpoints')).body.endpoints).toHaveLength(1);
  }, 60_000);
});
