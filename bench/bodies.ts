/**
 * npm run bench:bodies: one partner's large bodies against another partner's latency.
 *
 * The sandbox as users run it (real clock, a data file, AWB jobs running, its log to a
 * file), two partners. Partner B makes one 1-item create every 20 ms, one at a time, for
 * BENCH_SECONDS (8); first alone, then while partner A keeps BENCH_BODIES (8) requests of
 * about 1 MB each in flight (creates of thousands of items: read, parsed, validated and
 * refused for their size, as a partner's load test of large bodies is). Prints B's
 * median, p90 and p99 in both phases and the ratio of the medians.
 *
 * BENCH_CLI names the CLI to run (default dist/cli.js), so a build of another commit
 * (a worktree's dist/cli.js) can be measured the same way.
 */
import { request, Agent } from 'node:http';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createRequest } from '../test/support/orders.js';
import { percentile, SECONDS, spawnServer, stop, TMP } from './harness.js';

const BODIES = Number(process.env.BENCH_BODIES ?? 8);
const CLI = process.env.BENCH_CLI ?? 'dist/cli.js';
const TOKEN_A = 'bench-bodies-a';
const TOKEN_B = 'bench-bodies-b';

/** A create of about `bytes` bytes: as many items as fit. */
function largeBody(bytes: number): string {
  const one = JSON.stringify(createRequest(1).items[0]).length + 1;
  return JSON.stringify(createRequest(Math.floor(bytes / one)));
}

/** POSTs `body` on `agent` and resolves with the status and the time to the end of the answer (ms). */
function post(url: URL, agent: Agent, token: string, body: string): Promise<{ status: number; ms: number }> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: '/v1/order', method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - began }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Partner B's creates, one every 20 ms (or as soon as the last one is answered), for `seconds`. */
async function partnerB(url: URL, seconds: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify(createRequest(1));
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const began = performance.now();
    const { status, ms } = await post(url, agent, TOKEN_B, body);
    if (status !== 201) throw new Error(`partner B's create answered ${status}`);
    times.push(ms);
    await new Promise((r) => setTimeout(r, Math.max(0, 20 - (performance.now() - began))));
  }
  agent.destroy();
  return times;
}

/** Partner A's large bodies, BODIES in flight at all times until `stop` is called. */
function partnerA(url: URL): { stop: () => Promise<number> } {
  const agent = new Agent({ keepAlive: true, maxSockets: BODIES });
  const body = largeBody(1_000_000 - 20_000);
  let running = true;
  let sent = 0;
  const loops = Array.from({ length: BODIES }, async () => {
    while (running) {
      await post(url, agent, TOKEN_A, body);
      sent += 1;
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return sent;
    },
  };
}

const figures = (times: number[]) => ({ n: times.length, p50: percentile(times, 50), p90: percentile(times, 90), p99: percentile(times, 99) });
const shown = (f: ReturnType<typeof figures>) => `median ${f.p50.toFixed(1)} ms, p90 ${f.p90.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms (${f.n} creates)`;

async function main(): Promise<void> {
  mkdirSync(TMP, { recursive: true });
  const data = join(TMP, `bodies-${process.pid}.json`);
  const server = await spawnServer('sandbox-bodies', process.execPath, [CLI, '--port', '0', '--data', data, '--token', TOKEN_A, '--token', TOKEN_B, '--awb-delay', '1s'], { env: { NODE_ENV: 'production' } });
  try {
    const url = new URL(server.url);
    await partnerB(url, 1); // warm-up
    const alone = figures(await partnerB(url, SECONDS));
    const a = partnerA(url);
    const loaded = figures(await partnerB(url, SECONDS));
    const sent = await a.stop();
    console.log(`${CLI}: partner B alone: ${shown(alone)}`);
    console.log(`${CLI}: partner B beside ${BODIES} of partner A's 1 MB bodies in flight (${sent} sent): ${shown(loaded)}`);
    console.log(`${CLI}: median ${(loaded.p50 / alone.p50).toFixed(2)}× alone`);
  } finally {
    await stop(server.child);
    rmSync(data, { force: true });
    rmSync(`${data}.wal`, { force: true, recursive: true });
  }
}

await main();
