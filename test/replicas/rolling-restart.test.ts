import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { roundRobinProxy } from '../support/proxy.js';
import { Receiver } from '../webhooks/receiver.js';

/**
 * A rolling restart under load, as an upgrade of a shared deployment runs it: two CLI
 * replicas on one PostgreSQL behind a round-robin proxy, a steady create load, and a
 * receiver that takes a second to answer each webhook, so each replica always has
 * attempts in flight when it is told to stop. SIGTERM lets them finish and records them:
 * no receiver sees a webhook-id twice, and no acknowledged order misses its webhook.
 */

/** Clients, so the two replicas have room for the load's attempts (8 in flight per client and replica). */
const TOKENS = Array.from({ length: 6 }, (_, i) => `rolling-${i}`);
/** Creates per second through the proxy, one order each: at least this long, and on until both replicas are back (at most LOAD_MAX_MS). */
const RATE = 40;
const LOAD_MS = 20_000;
const LOAD_MAX_MS = 90_000;
/** When each replica is stopped (and started again), from the load's start. */
const STOP_A_AT = 4_000;
const STOP_B_AT = 8_000;
const RECEIVER_MS = 1_000;

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function replica(databaseUrl: string, receiver: Receiver): Promise<RunningCli> {
  return startCli(['--port', '0', '--database-url', databaseUrl, ...TOKENS.flatMap((t) => ['--token', t]), '--webhook-url', receiver.url, '--awb-delay', '200ms', '--seed', 'rolling', '--log-level', 'warn']);
}

describe('a rolling restart of two replicas under a steady create load', () => {
  it('delivers every AWB webhook exactly once: SIGTERM lets each replica finish and record its attempts in flight', async () => {
    const receiver = await Receiver.start();
    /** When each webhook-id arrived (wall ms). */
    const arrivalsById = new Map<string, number[]>();
    receiver.respond = (webhook) => {
      arrivalsById.set(webhook.id, [...(arrivalsById.get(webhook.id) ?? []), Date.now()]);
      return { status: 200, body: 'ok', delayMs: RECEIVER_MS };
    };
    const databaseUrl = await server.freshDatabase();
    const replicas = [await replica(databaseUrl, receiver), await replica(databaseUrl, receiver)];
    const upstreams = replicas.map((r) => r.url);
    const proxy = await roundRobinProxy(upstreams);
    const acknowledged: string[] = [];
    const refused = new Map<number, number>();
    const stops: Array<{ code: number | null; ms: number; inFlight: number }> = [];
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    /** The webhook attempts a replica has in flight: its claims of webhook jobs (worker ids name their process). */
    const attemptsOf = async (cli: RunningCli): Promise<number> =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'webhook' AND claimed_by LIKE $1`, [`worker_${cli.process.pid}_%`])).rows[0]!.n;
    let restarted = false;
    try {
      // The load: RATE creates a second, each one order, spread over the clients; never more than 100 at once.
      let inFlight = 0;
      let sent = 0;
      const started = Date.now();
      const creates: Array<Promise<void>> = [];
      const load = (async () => {
        while ((Date.now() - started < LOAD_MS || !restarted) && Date.now() - started < LOAD_MAX_MS) {
          const behind = Math.floor(((Date.now() - started) * RATE) / 1_000) - sent;
          for (let i = 0; i < behind && inFlight < 100; i += 1) {
            const token = TOKENS[sent++ % TOKENS.length]!;
            inFlight += 1;
            creates.push(
              fetch(`${proxy.url}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) })
                .then(async (res) => {
                  if (res.status === 201) acknowledged.push(...((await res.json()) as { order_numbers: string[] }).order_numbers);
                  else refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
                })
                .catch(() => void refused.set(0, (refused.get(0) ?? 0) + 1))
                .finally(() => (inFlight -= 1)),
            );
          }
          await sleep(25);
        }
      })();

      // Each replica in turn: SIGTERM while it has attempts in flight, the proxy told to leave it out (as an
      // orchestrator takes a stopping container out of rotation), wait for its exit, start it again.
      for (const [index, at] of [[0, STOP_A_AT], [1, STOP_B_AT]] as const) {
        await sleep(Math.max(0, started + at - Date.now()));
        let inFlightThen = 0;
        for (let tries = 0; tries < 100 && (inFlightThen = await attemptsOf(replicas[index]!)) === 0; tries += 1) await sleep(50);
        const stoppedAt = Date.now();
        const exited = replicas[index]!.stop('SIGTERM');
        upstreams[index] = upstreams[1 - index]!;
        const code = await exited;
        stops.push({ code, ms: Date.now() - stoppedAt, inFlight: inFlightThen });
        replicas[index] = await replica(databaseUrl, receiver);
        upstreams[index] = replicas[index].url;
      }
      restarted = true;
      await load;
      await Promise.all(creates);

      const awbIds = () => receiver.received.filter((r) => r.json.event === 'awb.generated');
      const missing = () => {
        const got = new Set(awbIds().map((r) => r.json.order_no));
        return acknowledged.filter((orderNo) => !got.has(orderNo));
      };
      for (let waited = 0; missing().length > 0 && waited < 90_000; waited += 250) await sleep(250);
      // A little longer: a duplicate would come now.
      await sleep(3_000);

      const context = JSON.stringify({ sent, acknowledged: acknowledged.length, refused: Object.fromEntries(refused), stops, received: receiver.received.length });
      // The load ran (the few refused were in flight at a replica as it stopped), and each stop came while that
      // replica had attempts in flight and ended with exit 0.
      expect(acknowledged.length, context).toBeGreaterThan(sent * 0.9);
      for (const stop of stops) {
        expect(stop.code, context).toBe(0);
        expect(stop.inFlight, context).toBeGreaterThan(0);
      }
      // 0 missing: every acknowledged order got its AWB webhook.
      expect(missing(), context).toEqual([]);
      // 0 duplicates: no webhook-id came twice, and no order got two AWB webhooks.
      const ids = receiver.received.map((r) => r.id);
      const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
      // (When not: when each came, ms from the load's start, beside the stops.)
      expect(repeated.map((id) => ({ id, arrived: arrivalsById.get(id)!.map((t) => t - started) })), context).toEqual([]);
      const orders = awbIds().map((r) => r.json.order_no);
      expect(new Set(orders).size, context).toBe(orders.length);
    } finally {
      await db.end();
      await proxy.close();
      for (const r of replicas) await r.stop().catch(() => undefined);
      await receiver.close();
    }
  }, 300_000);
});
