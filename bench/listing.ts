/**
 * npm run bench:listing : what one partner's filtered order listing costs the others on a
 * shared deployment. One sandbox as users run it (a data file, real clock, its log
 * to a file; `--awb-delay 1h`, so the seeded orders stay as created), BENCH_LISTING_ORDERS
 * (200,000, the shared deployments guide's `--retention-orders`) orders of partner A made
 * by 10-item creates, then BENCH_LISTING_ROUNDS (3) rounds of A's listings one at a time
 * (unfiltered, by a status every order has, by one none has, by courier), then A listing by
 * a status none has on each of BENCH_LISTING_CONNECTIONS (1,10,50) connections at once for
 * BENCH_LISTING_SECONDS (5) s, while partner B reads tracking every 2 ms. Prints each
 * listing's time and B's waits. BENCH_LISTING_CLI (default dist/cli.js) runs another build,
 * e.g. an older commit's in a worktree. BENCH_LISTING_STORE=postgres runs the sandbox as one
 * replica on an embedded PostgreSQL instead of the data file (where a listing's count is the
 * database's work; BENCH_LISTING_ORDERS 1,000 suits it, as a partner's load test would make).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createRequest } from '../test/support/orders.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { HEADERS, percentile, spawnServer, stop, TMP } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const ORDERS = Number(process.env.BENCH_LISTING_ORDERS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_LISTING_ROUNDS ?? 3);
const CLI = process.env.BENCH_LISTING_CLI ?? 'dist/cli.js';
const PARTNER_B = 'bench-partner-b-token';
const QUERIES = ['', '?status=created', '?status=cancelled', '?courier_code=jne&limit=10'];
const CONNECTIONS = (process.env.BENCH_LISTING_CONNECTIONS ?? '1,10,50').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_LISTING_SECONDS ?? 5);
const ON_POSTGRES = process.env.BENCH_LISTING_STORE === 'postgres';

/** Partner B's tracking reads, one every 2 ms after the last answer, until `stop`: their times (ms). */
function partnerB(url: string): { stop: () => Promise<number[]> } {
  let reading = true;
  const waits: number[] = [];
  const done = (async () => {
    while (reading) {
      const began = performance.now();
      await (await fetch(`${url}/v1/order/tracking/NOPE000001`, { headers: { authorization: `Bearer ${PARTNER_B}` } })).arrayBuffer();
      waits.push(performance.now() - began);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return {
    stop: async () => {
      reading = false;
      await done;
      return waits;
    },
  };
}

const waitsOf = (waits: number[]): string => `${waits.length} reads, p50 ${percentile(waits, 50)} / p99 ${percentile(waits, 99)} / max ${Math.round(Math.max(...waits))} ms`;

async function main(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const database: TestPostgres | undefined = ON_POSTGRES ? await startPostgres() : undefined;
  const store = database ? ['--database-url', await database.freshDatabase()] : ['--data', join(TMP, 'listing.json')];
  const args = [CLI, '--port', '0', ...store, '--token', BENCH_TOKEN, '--token', PARTNER_B, '--awb-delay', '1h'];
  console.log(`store: ${database ? 'PostgreSQL (embedded, one replica)' : 'a data file'}`);
  const sandbox = await spawnServer('listing', process.execPath, args, { env: { NODE_ENV: 'production' }, log: join(TMP, 'listing.log') });
  try {
    const seeded = Date.now();
    const seed = await autocannon({ url: `${sandbox.url}/v1/order`, method: 'POST', headers: HEADERS, body: JSON.stringify(createRequest(10)), connections: 10, amount: Math.ceil(ORDERS / 10) });
    if (seed.non2xx > 0 || seed.errors > 0) throw new Error(`seeding: ${seed.non2xx} answers not 2xx, ${seed.errors} errors`);
    console.log(`${ORDERS.toLocaleString('en')} orders of partner A in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
    let b = partnerB(sandbox.url);
    const times = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const query of QUERIES) {
        const began = performance.now();
        const answer = await fetch(`${sandbox.url}/__sandbox/orders${query}`, { headers: HEADERS });
        const { total } = (await answer.json()) as { total: number };
        if (answer.status !== 200) throw new Error(`${query}: ${answer.status}`);
        const name = `${query || '(no filter)'} → total ${total}`;
        times.set(name, [...(times.get(name) ?? []), Math.round(performance.now() - began)]);
      }
    }
    console.log('| partner A lists, one at a time | ms per round |\n|---|---|');
    for (const [query, ms] of times) console.log(`| \`${query}\` | ${ms.join(', ')} |`);
    console.log(`\npartner B meanwhile: ${waitsOf(await b.stop())}\n`);
    console.log('| partner A, `?status=cancelled` on | A\'s listings, p50 ms | partner B meanwhile |\n|---|---|---|');
    for (const connections of CONNECTIONS) {
      b = partnerB(sandbox.url);
      const listed: number[] = [];
      const until = Date.now() + SECONDS * 1000;
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (Date.now() < until) {
            const began = performance.now();
            const answer = await fetch(`${sandbox.url}/__sandbox/orders?status=cancelled`, { headers: HEADERS });
            await answer.arrayBuffer();
            if (answer.status !== 200) throw new Error(`listing: ${answer.status}`);
            listed.push(performance.now() - began);
          }
        }),
      );
      console.log(`| ${connections} connection(s) | ${listed.length} listings, ${percentile(listed, 50)} | ${waitsOf(await b.stop())} |`);
    }
  } finally {
    await stop(sandbox.child);
    await database?.stop();
  }
}

await main();
