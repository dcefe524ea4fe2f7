/**
 * `npm run bench:retention`: how far past `--retention-orders` a partner's load takes its
 * client, and how soon the sandbox brings it back, on the embedded store and on one
 * PostgreSQL replica, as users run them (real clock, a data file or a database,
 * `--awb-delay 1s`, webhooks to a local receiver, log level info to a file).
 *
 * Per store: BENCH_RETENTION_CREATES (1,000) 10-item creates on 10 connections against a
 * limit of BENCH_RETENTION_LIMIT (2,000), the client's order count (its listing's total)
 * read every 250 ms during the load and after it, until it is back within the bound the
 * counts keep (the limit and a tenth of it: a client is counted again once its creates
 * reach a tenth of the limit), at most 60 s. Printed: the creates' rate, the count when
 * the load ended, the highest count seen, how long after the load the count was back
 * within that bound, and what the `retention sweep` lines say went.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createRequest } from '../test/support/orders.js';
import { startPostgres } from '../test/support/postgres.js';
import { HEADERS, spawnServer, stop, TMP } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const CREATES = Number(process.env.BENCH_RETENTION_CREATES ?? 1_000);
const LIMIT = Number(process.env.BENCH_RETENTION_LIMIT ?? 2_000);
/** The most orders a client keeps between two counts of its orders. */
const BOUND = LIMIT + Math.floor(LIMIT / 10);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Figure {
  store: string;
  rps: number;
  atEnd: number;
  highest: number;
  backMs: number | undefined;
  removed: Record<string, number>;
}

async function orderCount(url: string): Promise<number> {
  const page = (await (await fetch(`${url}/__sandbox/orders?limit=1`, { headers: HEADERS })).json()) as { total: number };
  return page.total;
}

/** What the `retention sweep` lines of the log say went, summed. */
function sweptIn(log: string): Record<string, number> {
  const removed: Record<string, number> = {};
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (!line.includes('"retention sweep"')) continue;
    for (const [what, n] of Object.entries((JSON.parse(line) as { removed: Record<string, number> }).removed)) removed[what] = (removed[what] ?? 0) + n;
  }
  return removed;
}

async function measure(store: string, storeArgs: string[], hook: string): Promise<Figure> {
  const log = join(TMP, `retention-${store}.log`);
  const args = ['dist/cli.js', '--port', '0', ...storeArgs, '--token', BENCH_TOKEN, '--awb-delay', '1s', '--webhook-url', hook, '--retention-orders', String(LIMIT)];
  const server = await spawnServer(`retention-${store}`, process.execPath, args, { env: { NODE_ENV: 'production' }, log });
  try {
    let highest = 0;
    let loading = true;
    // The count while the load runs, from another connection: how far past the limit it went.
    const watch = (async () => {
      while (loading) {
        highest = Math.max(highest, await orderCount(server.url));
        await sleep(250);
      }
    })();
    const result = await autocannon({ url: `${server.url}/v1/order`, method: 'POST', connections: 10, headers: HEADERS, body: JSON.stringify(createRequest(10)), amount: CREATES });
    loading = false;
    await watch;
    if (result.non2xx + result.errors > 0) throw new Error(`${store}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    const ended = performance.now();
    const atEnd = await orderCount(server.url);
    highest = Math.max(highest, atEnd);
    let backMs: number | undefined;
    for (let count = atEnd; performance.now() - ended < 60_000; count = await orderCount(server.url)) {
      highest = Math.max(highest, count);
      if (count <= BOUND) {
        backMs = Math.round(performance.now() - ended);
        break;
      }
      await sleep(250);
    }
    // A removal logs what went once it is over (its settled webhooks and journal too): until its lines count every order gone.
    const gone = CREATES * 10 - (await orderCount(server.url));
    let removed: Record<string, number> = {};
    for (const end = performance.now() + 15_000; (removed.orders ?? 0) < gone && performance.now() < end; await sleep(250)) removed = sweptIn(log);
    return { store, rps: Math.round(CREATES / result.duration), atEnd, highest, backMs, removed };
  } finally {
    await stop(server.child);
  }
}

async function main(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const database = await startPostgres();
  try {
    const figures = [
      await measure('embedded', ['--data', join(TMP, 'retention.json')], hook),
      await measure('postgresql', ['--database-url', await database.freshDatabase()], hook),
    ];
    console.log(`${CREATES.toLocaleString('en')} 10-item creates on 10 connections, --retention-orders ${LIMIT.toLocaleString('en')}, --awb-delay 1s, webhooks to a local receiver, Node ${process.version}.\n`);
    console.log(`| store | creates rps | orders when the load ended | most orders seen | back within ${BOUND.toLocaleString('en')} after the load | removed (retention sweep lines) |`);
    console.log('|---|---|---|---|---|---|');
    for (const f of figures) {
      const removed = Object.entries(f.removed).map(([what, n]) => `${what} ${n.toLocaleString('en')}`).join(', ');
      console.log(`| ${f.store} | ${f.rps} | ${f.atEnd.toLocaleString('en')} | ${f.highest.toLocaleString('en')} | ${f.backMs === undefined ? 'not within 60 s' : `${f.backMs.toLocaleString('en')} ms`} | ${removed} |`);
    }
  } finally {
    await database.stop();
    receiver.close();
  }
}

await main();
