/**
 * npm run bench:poller : a careless poller, as the readiness report sees it. A client that
 * polls tracking for orders not picked up yet gets a 404 per read, and each 404 keeps a
 * mark (what its next read of that AWB is judged against): one per AWB, up to 500 per
 * client. The figures show what those marks cost a request: GET tracking of BENCH_POLLER_AWBS
 * (600) distinct AWBs that are not there yet, round-robin, against the same number of reads
 * of one AWB, on the embedded store (a data file) and on one PostgreSQL replica (an
 * embedded PostgreSQL server), both as users run them (real clock, log level info to a
 * file). autocannon on 10 connections, BENCH_POLLER_REQUESTS (8,000) requests per case after
 * a warm-up of 3,000. On PostgreSQL also: reads of the report's row per request (the
 * table's scans) and WAL bytes per request, which do not depend on how busy the machine is.
 * BENCH_POLLER_CLI (default dist/cli.js) runs another build, e.g. an older commit's in a
 * worktree, to compare with.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { startPostgres } from '../test/support/postgres.js';
import { HEADERS, spawnServer, stop, TMP } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const AWBS = Number(process.env.BENCH_POLLER_AWBS ?? 600);
const REQUESTS = Number(process.env.BENCH_POLLER_REQUESTS ?? 8_000);
const CLI = process.env.BENCH_POLLER_CLI ?? 'dist/cli.js';

/** Reads of `count` AWBs no order has (yet), in turn. */
const reads = (count: number) => Array.from({ length: count }, (_, i) => ({ method: 'GET', path: `/v1/order/tracking/NOPE${String(i).padStart(6, '0')}` }));
const lsnBytes = (lsn: string): number => {
  const [high, low] = lsn.split('/');
  return parseInt(high!, 16) * 2 ** 32 + parseInt(low!, 16);
};

async function main(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const server = await startPostgres();
  const rows: string[] = [];
  try {
    for (const store of ['embedded', 'PostgreSQL'] as const) {
      for (const awbs of [AWBS, 1]) {
        const url = store === 'PostgreSQL' ? await server.freshDatabase() : undefined;
        const sandbox = await spawnServer(`poller-${store}-${awbs}`, process.execPath, [CLI, '--port', '0', ...(url ? ['--database-url', url] : ['--data', join(TMP, `poller-${awbs}.json`)]), '--token', BENCH_TOKEN, '--awb-delay', '1h'], {
          env: { NODE_ENV: 'production' },
          log: join(TMP, `poller-${store}-${awbs}.log`),
        });
        const db = url ? new pg.Client({ connectionString: url }) : undefined;
        await db?.connect();
        try {
          const options = { url: sandbox.url, connections: 10, headers: HEADERS, requests: reads(awbs) };
          await autocannon({ ...options, amount: 3_000 });
          const scans = async () => Number((await db!.query<{ n: string }>("SELECT seq_scan + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'readiness_reports'")).rows[0]?.n ?? 0);
          const wal = async () => lsnBytes((await db!.query<{ l: string }>('SELECT pg_current_wal_lsn() AS l')).rows[0]!.l);
          const before = db ? { scans: await scans(), wal: await wal() } : undefined;
          const result = await autocannon({ ...options, amount: REQUESTS });
          const db_ = before ? ` ${((await scans()) - before.scans) / REQUESTS} | ${Math.round(((await wal()) - before.wal) / REQUESTS).toLocaleString('en')} |` : ' | |';
          rows.push(`| ${store} | ${awbs === 1 ? 'one AWB' : `${awbs.toLocaleString('en')} AWBs`} | ${Math.round(result.requests.average).toLocaleString('en')} | ${result.latency.p99} |${db_.replace(/^ (\d)/, ' $1')}`);
        } finally {
          await db?.end();
          await stop(sandbox.child);
        }
      }
    }
  } finally {
    await server.stop();
    rmSync(TMP, { recursive: true, force: true });
  }
  console.log(`A careless poller (${CLI}): ${REQUESTS.toLocaleString('en')} tracking reads answered 404, on 10 connections, after 3,000 to warm up.\n`);
  console.log('| store | reads of | requests/s (a busy machine moves it) | p99 ms | report row reads / request | WAL bytes / request |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
}

await main();
process.exit(0);
