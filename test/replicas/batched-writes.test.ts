import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/grade.js';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { roundRobinProxy } from '../support/proxy.js';

const TOKEN = 'batched-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
/**
 * The bound checked for another replica's journal entries and report counts: the manual's
 * 250 ms (100 ms of holding, plus the statement) with room for a loaded machine, well short
 * of what entries written only with a replica's next request, or at its stop, would take.
 */
const LAG_MS = 1_000;

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** A CLI replica on the database (real clock, no webhook receiver). */
const replica = (databaseUrl: string): Promise<RunningCli> => startCli(['--port', '0', '--database-url', databaseUrl, '--token', TOKEN, '--awb-delay', '200ms', '--log-level', 'warn']);

async function createdCount(url: string): Promise<number> {
  const report = (await (await fetch(`${url}/__sandbox/report`, { headers })).json()) as Report;
  return report.items.find((item) => item.id === 'op.create-order')!.exercised;
}

async function journalPaths(url: string): Promise<string[]> {
  const res = await fetch(`${url}/__sandbox/requests?operation_id=trackOrder`, { headers });
  return ((await res.json()) as { requests: Array<{ path: string }> }).requests.map((entry) => entry.path);
}

describe('journal entries and report counts on PostgreSQL, written in batches', () => {
  it('with three replicas behind a proxy, the readiness report counts every create (N of N) and no observation fails', async () => {
    const url = await server.freshDatabase();
    const replicas = [await replica(url), await replica(url), await replica(url)];
    const proxy = await roundRobinProxy(replicas.map((r) => r.url));
    try {
      const N = 400;
      let next = 0;
      const statuses: number[] = [];
      // Ten clients at once, as a partner's load does: the creates of one client land on all three replicas together.
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (next < N) {
            next += 1;
            const res = await fetch(`${proxy.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
            await res.arrayBuffer();
            statuses.push(res.status);
          }
        }),
      );
      expect(statuses.filter((s) => s === 201)).toHaveLength(N);
      expect(proxy.served.every((n) => n >= N / 4)).toBe(true);
      // Each replica's own counts are written before it answers; the others' within the lag.
      const answered = Date.now();
      for (const r of replicas) await expect.poll(() => createdCount(r.url), { timeout: LAG_MS, interval: 20 }).toBe(N);
      expect(Date.now() - answered).toBeLessThanOrEqual(LAG_MS + 500);
      for (const r of replicas) expect(r.output()).not.toMatch(/readiness report observation failed|kept changing/);
    } finally {
      await proxy.close();
      for (const r of replicas) await r.stop();
    }
  });

  it('shows a replica its own requests in the journal and report at once, and another replica within its batch interval', async () => {
    const url = await server.freshDatabase();
    const [a, b] = [await replica(url), await replica(url)];
    try {
      for (let round = 1; round <= 3; round += 1) {
        const paths = [1, 2, 3].map((n) => `/v1/order/tracking/NOPE${round}${n}`);
        for (const path of paths) await (await fetch(`${a.url}${path}`, { headers })).arrayBuffer();
        const answered = Date.now();
        // Through B: polled until they show; the poll that first sees them was sent within the lag.
        let sent = Date.now();
        for (;;) {
          sent = Date.now();
          if ((await journalPaths(b.url)).slice(-3).join() === paths.join()) break;
          if (sent - answered > 5_000) throw new Error('B never saw the entries A journaled');
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        expect(sent - answered).toBeLessThanOrEqual(LAG_MS);
      }
      // Read your own writes: the very next read through A has its requests, batch interval or not.
      for (let round = 1; round <= 3; round += 1) {
        const paths = [1, 2].map((n) => `/v1/order/tracking/MINE${round}${n}`);
        for (const path of paths) await (await fetch(`${a.url}${path}`, { headers })).arrayBuffer();
        expect((await journalPaths(a.url)).slice(-2)).toEqual(paths);
      }
      // The report's counts the same way: A's at once.
      await (await fetch(`${a.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) })).arrayBuffer();
      expect(await createdCount(a.url)).toBe(1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
