/**
 * npm run bench:listing : what one partner's filtered order listing costs the others on a
 * shared deployment. One sandbox as users run it (a data file, real clock, its log
 * to a file; `--awb-delay 1h`, so the seeded orders stay as created), BENCH_LISTING_ORDERS
 * (200,000, the shared deployments guide's `--retention-orders`) orders of partner A made
 * by 10-item creates, then BENCH_LISTING_ROUNDS (3) rounds of A's listings (unfiltered, by a
 * status every order has, by one none has, by courier) while partner B reads tracking
 * every 2 ms. Prints each listing's time and B's waits meanwhile. BENCH_LISTING_CLI
 * (default dist/cli.js) runs another build, e.g. an older commit's in a worktree.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createRequest } from '../test/support/orders.js';
import { HEADERS, percentile, spawnServer, stop, TMP } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const ORDERS = Number(process.env.BENCH_LISTING_ORDERS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_LISTING_ROUNDS ?? 3);
const CLI = process.env.BENCH_LISTING_CLI ?? 'dist/cli.js';
const PARTNER_B = 'bench-partner-b-token';
const QUERIES = ['', '?status=created', '?status=cancelled', '?courier_code=jne&limit=10'];

async function main(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const args = [CLI, '--port', '0', '--data', join(TMP, 'listing.json'), '--token', BENCH_TOKEN, '--token', PARTNER_B, '--awb-delay', '1h'];
  const sandbox = await spawnServer('listing', process.execPath, args, { env: { NODE_ENV: 'production' }, log: join(TMP, 'listing.log') });
  try {
    const seeded = Date.now();
    await autocannon({ url: `${sandbox.url}/v1/order`, method: 'POST', headers: HEADERS, body: JSON.stringify(createRequest(10)), connections: 10, amount: Math.ceil(ORDERS / 10) });
    console.log(`${ORDERS.toLocaleString('en')} orders of partner A in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
    let reading = true;
    const waits: number[] = [];
    const partnerB = (async () => {
      while (reading) {
        const began = performance.now();
        await (await fetch(`${sandbox.url}/v1/order/tracking/NOPE000001`, { headers: { authorization: `Bearer ${PARTNER_B}` } })).arrayBuffer();
        waits.push(performance.now() - began);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const times = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const query of QUERIES) {
        const began = performance.now();
        const answer = await fetch(`${sandbox.url}/__sandbox/orders${query}`, { headers: HEADERS });
        const { total } = (await answer.json()) as { total: number };
        if (answer.status !== 200) throw new Error(`${query}: ${answer.status}`);
        times.set(`${query || '(no filter)'} → total ${total}`, [...(times.get(`${query || '(no filter)'} → total ${total}`) ?? []), Math.round(performance.now() - began)]);
      }
    }
    reading = false;
    await partnerB;
    console.log('| partner A lists | ms per round |\n|---|---|');
    for (const [query, ms] of times) console.log(`| \`${query}\` | ${ms.join(', ')} |`);
    console.log(`\npartner B meanwhile: ${waits.length} tracking reads, p50 ${percentile(waits, 50).toFixed(1)} ms, p99 ${percentile(waits, 99).toFixed(1)} ms, max ${Math.max(...waits).toFixed(1)} ms`);
  } finally {
    await stop(sandbox.child);
  }
}

await main();
