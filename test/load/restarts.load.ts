import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIdOf } from '../../src/clients/registry.js';
import type { Order } from '../../src/records/order.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import type { Delivery } from '../../src/records/delivery.js';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest, item } from '../support/orders.js';
import { FlakyReceiver, freePort, type Hit } from './flaky-receiver.js';

const CLIENTS = Number(process.env.LOAD_CLIENTS ?? 50);
const CREATES = Number(process.env.LOAD_CREATES ?? 20);
const FAIL_RATE = 0.3;
const KILLS = 2;
const SECRET = 'whsec_TG9hZFRlc3RMb2FkVGVzdExvYWRUZXN0TG9hZA==';
// 12 attempts: with 30% failures, the chance that one webhook fails all of them is 0.3^12 ≈ 5e-7.
const RETRIES = '0,1s,2s,4s,8s,15s,30s,1m,1m,1m,1m,1m';
const tokens = Array.from({ length: CLIENTS }, (_, i) => `load-client-${String(i).padStart(2, '0')}`);

interface Acked {
  token: string;
  orderNo: string;
  code: string;
}

let dir: string;
let data: string;
let port: number;
let receiver: FlakyReceiver;
let cli: RunningCli;
const acked: Acked[] = [];
const counts = { requests: 0, refused: 0, cut: 0, rejected: 0, restarts: 0 };
const rejections: string[] = [];
/** What each killed sandbox printed (its warnings and errors), for a failure to show. */
const killedOutputs: string[] = [];
/** When each SIGKILL was sent (wall-clock ms). */
const killedAt: number[] = [];

const args = () => [
  '--port', String(port), '--data', data, '--clock', 'real', '--speed', '60', '--awb-delay', '0-2s', '--seed', 'load',
  '--webhook-url', receiver.url, '--webhook-secret', SECRET, '--webhook-retries', RETRIES, '--webhook-timeout', '2s', '--log-level', 'warn',
];
const start = () => startCli(args(), { SANDBOX_TOKENS: tokens.join(',') });
const base = () => `http://127.0.0.1:${port}`;

/** One client: creates orders until `CREATES` were acknowledged (201); a request the server died under is unacknowledged and the client goes on. */
async function client(token: string, w: number): Promise<void> {
  let mine = 0;
  for (let i = 0; mine < CREATES; i++) {
    const code = `W${w}-${i}`; // fresh on every attempt, so a duplicate in the store would show as a repeated code
    counts.requests++;
    try {
      const res = await fetch(`${base()}/v1/order`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(createRequest(1, { items: [item({ order_code: code })] })),
        signal: AbortSignal.timeout(15_000),
      });
      const body = (await res.json()) as { order_numbers?: string[] };
      if (res.status === 201) {
        acked.push({ token, orderNo: body.order_numbers![0]!, code });
        mine++;
      } else {
        counts.rejected++;
        rejections.push(`${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      }
    } catch (error) {
      // Refused while the sandbox was down (nothing sent), or cut by the kill (the order may or may not exist).
      if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') counts.refused++;
      else counts.cut++;
      await sleep(50);
    }
  }
}

/** Kills the sandbox with SIGKILL each time another share of the creates is acknowledged, and starts it again on the same port and data file. */
async function killer(total: number): Promise<void> {
  for (let k = 1; k <= KILLS; k++) {
    while (acked.length < (total * k) / (KILLS + 1)) await sleep(5);
    killedOutputs.push(cli.output());
    killedAt.push(Date.now());
    await cli.stop('SIGKILL');
    cli = await start();
    counts.restarts++;
  }
}

function awbHits(hits: Hit[]): Map<string, Hit[]> {
  const byOrder = new Map<string, Hit[]>();
  for (const hit of hits) {
    const payload = JSON.parse(hit.body) as { event: string; order_no?: string };
    if (payload.event !== 'awb.generated') continue;
    byOrder.set(payload.order_no!, [...(byOrder.get(payload.order_no!) ?? []), hit]);
  }
  return byOrder;
}

/** What the sandbox and the receiver know of orders whose AWB webhook never got a 200, and what the sandboxes logged above info. */
async function whyUndelivered(orderNos: string[], byOrder: Map<string, Hit[]>): Promise<string> {
  const lines: string[] = [];
  for (const orderNo of orderNos.slice(0, 5)) {
    const { token } = acked.find((a) => a.orderNo === orderNo)!;
    const headers = { authorization: `Bearer ${token}` };
    const order = await fetch(`${base()}/__sandbox/orders/${orderNo}`, { headers }).then((r) => r.text());
    const deliveries = await fetch(`${base()}/__sandbox/webhooks/deliveries?order_no=${orderNo}`, { headers }).then((r) => r.text());
    const hits = (byOrder.get(orderNo) ?? []).map((h) => `${h.id} ${h.timestamp} ${h.answered ?? 'dropped'} at ${h.at}`);
    lines.push(`order ${orderNo}: ${order.slice(0, 3000)}`, `its deliveries: ${deliveries.slice(0, 6000)}`, `its hits: ${hits.join('; ') || 'none'}`);
  }
  const clock = await fetch(`${base()}/__sandbox/clock`, { headers: { authorization: `Bearer ${tokens[0]}` } }).then((r) => r.text());
  lines.push(`the clock: ${clock.slice(0, 500)}; killed at ${killedAt.join(', ')}; now ${Date.now()}`);
  const logged = [...killedOutputs, cli.output()].flatMap((output, run) =>
    output.split('\n').filter((line) => line.startsWith('{') && !line.includes('"level":30')).map((line) => `run ${run + 1}: ${line.slice(0, 800)}`),
  );
  return [...lines, `logged above info (${logged.length}):`, ...logged.slice(0, 40)].join('\n');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-load-'));
  data = join(dir, 'sandbox.json');
  port = await freePort();
  receiver = await FlakyReceiver.start(FAIL_RATE, 9);
  cli = await start();
});

afterAll(async () => {
  if (cli?.process.exitCode === null) await cli.stop('SIGKILL');
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe(`${CLIENTS} clients × ${CREATES} creates, a receiver failing ${FAIL_RATE * 100}% of webhooks, the sandbox SIGKILLed and restarted ${KILLS} times`, () => {
  it('loses no acknowledged order and no AWB webhook, and stores no duplicate', async () => {
    const started = Date.now();
    const total = CLIENTS * CREATES;
    await Promise.all([...tokens.map((t, w) => client(t, w)), killer(total)]);
    expect(counts.restarts).toBe(KILLS);
    expect(rejections).toEqual([]);
    expect(acked).toHaveLength(total);

    // Every acknowledged order's AWB webhook reaches the receiver (a 200), however many attempts it takes.
    const deadline = Date.now() + 90_000;
    const delivered = () => {
      const byOrder = awbHits(receiver.hits);
      return acked.filter((a) => byOrder.get(a.orderNo)?.some((h) => h.answered === 200)).length;
    };
    while (delivered() < total && Date.now() < deadline) await sleep(200);
    const byOrder = awbHits(receiver.hits);

    // Through the API: each acknowledged order exists, once, for its own client, with the AWB its webhook announced.
    const listed = new Map<string, string[]>();
    await Promise.all(
      tokens.map(async (token) => {
        counts.requests++;
        const res = await fetch(`${base()}/__sandbox/orders?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
        listed.set(token, ((await res.json()) as { orders: Array<{ order_no: string }> }).orders.map((o) => o.order_no));
      }),
    );
    let lost = 0;
    const webhookLosses: string[] = [];
    const wrongIds: string[] = [];
    for (const a of acked) {
      counts.requests++;
      const res = await fetch(`${base()}/__sandbox/orders/${a.orderNo}`, { headers: { authorization: `Bearer ${a.token}` } });
      const state = (await res.json()) as { awb: string | null; order_code: string };
      if (res.status !== 200 || state.order_code !== a.code) lost++;
      expect(listed.get(a.token)!.filter((n) => n === a.orderNo)).toHaveLength(1);
      const hits = byOrder.get(a.orderNo) ?? [];
      if (!hits.some((h) => h.answered === 200)) webhookLosses.push(a.orderNo);
      const ids = new Set(hits.map((h) => h.id));
      if (ids.size !== 1) wrongIds.push(`${a.orderNo}: ${[...ids].join(',')}`);
      for (const h of hits) expect((JSON.parse(h.body) as { awb: string }).awb).toBe(state.awb);
    }
    expect(lost).toBe(0);
    expect(webhookLosses, webhookLosses.length > 0 ? await whyUndelivered(webhookLosses, byOrder) : undefined).toEqual([]);
    expect(wrongIds).toEqual([]);
    // One webhook-id belongs to one order only.
    const orderOfId = new Map<string, string>();
    for (const [orderNo, hits] of byOrder) for (const h of hits) expect(orderOfId.get(h.id) ?? orderNo).toBe(orderNo), orderOfId.set(h.id, orderNo);
    // Every webhook that arrived is signed with the secret.
    const verifier = new Webhook(SECRET);
    for (const h of receiver.hits) verifier.verify(h.body, { 'webhook-id': h.id, 'webhook-timestamp': h.timestamp, 'webhook-signature': h.signature });

    // A receiver's 200 just before a kill may never have been recorded: the sandbox makes that attempt again, and its
    // retries go on after the test saw the 200. Once none is pending, the stop below finds every delivery settled.
    const pendingLeft = async () =>
      (await Promise.all(tokens.map(async (token) => ((await (await fetch(`${base()}/__sandbox/webhooks/deliveries?status=pending&limit=1`, { headers: { authorization: `Bearer ${token}` } })).json()) as { total: number }).total))).reduce((a, b) => a + b, 0);
    await expect.poll(pendingLeft, { timeout: 60_000, interval: 500 }).toBe(0);

    // The data file, after a clean stop: valid JSON, every acknowledged order once, no duplicate order, code, AWB or delivery.
    expect(await cli.stop('SIGTERM')).toBe(0);
    const file = JSON.parse(readFileSync(data, 'utf8')) as { orders: Record<string, Order>; deliveries: Record<string, Delivery> };
    const orders = Object.values(file.orders);
    for (const a of acked) expect(file.orders[a.orderNo]).toMatchObject({ order_no: a.orderNo, client_id: clientIdOf(a.token), item: { order_code: a.code } });
    const codes = orders.map((o) => `${o.client_id}/${o.item.order_code}`);
    expect(new Set(codes).size).toBe(codes.length);
    const awbs = orders.map((o) => o.awb).filter((x): x is string => !!x);
    expect(new Set(awbs).size).toBe(awbs.length);
    const awbDeliveries = Object.values(file.deliveries).filter((d) => d.event === 'awb.generated');
    const perOrder = new Map<string, Delivery[]>();
    for (const d of awbDeliveries) perOrder.set(d.order_no!, [...(perOrder.get(d.order_no!) ?? []), d]);
    // Delivered, but for one whose only 200s came before a kill (unrecorded) and whose retries after it all failed.
    const acknowledgedBeforeKill = (id: string) => receiver.hits.some((h) => h.id === id && h.answered === 200 && killedAt.some((k) => h.at <= k));
    for (const a of acked) {
      expect(perOrder.get(a.orderNo)).toHaveLength(1);
      const delivery = perOrder.get(a.orderNo)![0]!;
      if (delivery.status !== 'delivered') expect({ id: delivery.id, status: delivery.status, acknowledgedBeforeKill: acknowledgedBeforeKill(delivery.id) }).toEqual({ id: delivery.id, status: 'failed', acknowledgedBeforeKill: true });
    }
    const reopened = await JournaledFile.open({ path: data });
    expect(reopened.count('orders')).toBe(orders.length);
    await reopened.close();

    const ids = new Set(receiver.hits.map((h) => h.id));
    console.log(
      `[load] ${CLIENTS} clients, ${counts.requests} requests, ${acked.length} acknowledged (201), ${counts.cut} cut by a kill (unacknowledged; ${orders.length - acked.length} of them stored anyway), ` +
        `${counts.refused} refused while down, restarts ${counts.restarts} (SIGKILL), ` +
        `faults injected ${receiver.failures} of ${receiver.hits.length} webhook requests (${Math.round((100 * receiver.failures) / receiver.hits.length)}%), ` +
        `webhooks received ${ids.size} unique / ${receiver.hits.length} total, losses 0 (orders) 0 (webhooks), duplicates 0, ${Date.now() - started} ms`,
    );
  });
});
