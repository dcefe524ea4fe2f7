import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { Receiver } from '../webhooks/receiver.js';

const ORDERS = 20_000;
const SEGMENT_BOUND = 64 * 2 ** 20; // the store's default segmentBytes
const YEAR_MS = 365 * 24 * 3_600_000;
const headers = { authorization: 'Bearer year', 'content-type': 'application/json' };

const dir = mkdtempSync(join(tmpdir(), 'sandbox-year-'));
const data = join(dir, 'sandbox.json');
let receiver: Receiver;
let cli: RunningCli | undefined;
afterAll(async () => {
  await cli?.stop('SIGKILL');
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The journal segments on disk now, with their sizes. */
const segments = () =>
  readdirSync(dir)
    .filter((name) => name.startsWith('sandbox.json.wal.'))
    .map((name) => ({ name, bytes: statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0 }));

const get = async <T>(base: string, path: string): Promise<T> => (await (await fetch(`${base}${path}`, { headers })).json()) as T;
const totalOf = async (base: string, path: string) => (await get<{ total: number }>(base, path)).total;

describe(`a manual clock advanced one year over ${ORDERS.toLocaleString('en')} orders in flight, with a webhook receiver`, () => {
  it('keeps every journal segment within its bound, attempts and delivers every webhook, answers meanwhile, and restarts after a SIGKILL', async () => {
    receiver = await Receiver.start();
    const args = ['--port', '0', '--data', data, '--token', 'year', '--clock', 'manual', '--seed', 'year', '--webhook-url', receiver.url, '--log-level', 'warn'];
    cli = await startCli(args);
    const base = cli.url;

    const started = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < ORDERS / 10) {
        next += 1;
        const res = await fetch(`${base}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(10)) });
        expect(res.status).toBe(201);
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const createMs = Date.now() - started;

    // While the year passes: watch the segments and how long health takes to answer.
    let biggest = 0;
    const segmentsSeen = new Set<string>();
    let slowest = 0;
    let healthChecks = 0;
    let advancing = true;
    const watch = (async () => {
      while (advancing) {
        for (const s of segments()) {
          biggest = Math.max(biggest, s.bytes);
          segmentsSeen.add(s.name);
        }
        const asked = Date.now();
        const health = await fetch(`${base}/__sandbox/health`);
        await health.arrayBuffer();
        slowest = Math.max(slowest, Date.now() - asked);
        healthChecks += 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const advanceStarted = Date.now();
    const advanced = await fetch(`${base}/__sandbox/clock/advance`, { method: 'POST', headers, body: JSON.stringify({ ms: YEAR_MS }) });
    const advanceMs = Date.now() - advanceStarted;
    advancing = false;
    await watch;
    expect(advanced.status).toBe(200);
    await advanced.arrayBuffer();
    for (const s of segments()) biggest = Math.max(biggest, s.bytes);

    const deliveries = await totalOf(base, '/__sandbox/webhooks/deliveries?limit=1');
    const delivered = await totalOf(base, '/__sandbox/webhooks/deliveries?limit=1&status=delivered');
    console.log(
      `[year-advance] ${ORDERS} orders created in ${(createMs / 1000).toFixed(1)} s; advance of a year: ${(advanceMs / 1000).toFixed(1)} s; ` +
        `${segmentsSeen.size} journal segments seen, the biggest ${(biggest / 2 ** 20).toFixed(1)} MiB (bound ${SEGMENT_BOUND / 2 ** 20} MiB); ` +
        `health answered ${healthChecks} times meanwhile, the slowest in ${slowest} ms; ${delivered} of ${deliveries} deliveries delivered, ${receiver.received.length} received`,
    );
    expect(biggest).toBeLessThanOrEqual(SEGMENT_BOUND);
    expect(deliveries).toBeGreaterThanOrEqual(ORDERS); // an awb.generated per order at least
    expect(delivered).toBe(deliveries);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(deliveries);
    expect(await totalOf(base, '/__sandbox/orders?limit=1&status=delivered')).toBeGreaterThan(0);
    expect(healthChecks).toBeGreaterThan(1); // requests were answered during the advance
    const states = await get<{ total: number }>(base, '/__sandbox/orders?limit=1');

    await cli.stop('SIGKILL');
    cli = await startCli(args);
    expect(await totalOf(cli.url, '/__sandbox/orders?limit=1')).toBe(states.total);
    expect(await totalOf(cli.url, '/__sandbox/webhooks/deliveries?limit=1&status=delivered')).toBe(deliveries);
    expect(await totalOf(cli.url, '/__sandbox/webhooks/deliveries?limit=1')).toBe(deliveries);
    expect(await cli.stop()).toBe(0);
    cli = undefined;
  }, 900_000);
});
