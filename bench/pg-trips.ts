/**
 * npx tsx bench/pg-trips.ts (after npm run build): what one PostgreSQL replica sends to its
 * database per request, in figures that do not depend on how busy the machine is, and
 * its CPU time per request beside the embedded store's.
 *
 * One embedded PostgreSQL server (default settings) with 1,000 seeded delivered orders,
 * one replica as users run it (`--awb-delay 1s`, real clock) with bench/pg-trips.cjs
 * preloaded. For GET tracking and POST 1 item: a warm-up, then BENCH_TRIPS_REQUESTS
 * (2,000) requests on 10 connections, and the work they leave behind done (AWB jobs and
 * webhooks, batched journal and report writes); per request: statements, socket writes (round
 * trips: a pipelined group is one) and reads, the replica's and the database's
 * user + system CPU time (from /proc), and the statements by text. CPU times rise on a
 * busy machine; the counts do not. The server runs pg_stat_statements, so each statement's
 * executor time per request is shown beside it: the database's CPU time less what the
 * executor spends is the protocol, the parsing of parameters, commits and the server's
 * background work.
 *
 * To see what a change of the database or the transport would give (docs/reference/performance.md):
 * BENCH_PG_SETTINGS sets server settings, e.g. `synchronous_commit=off` (comma-separated
 * name=value), and BENCH_TRIPS_SOCKET=1 has the replica reach the server through its
 * Unix socket instead of TCP (its socket writes and reads are then not counted: 0).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { seedOrders } from '../scripts/seed-postgres.js';
import { deliveredOrder } from '../test/support/delivered-order.js';
import { createRequest } from '../test/support/orders.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { HEADERS, spawnServer, stop, TMP } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const REQUESTS = Number(process.env.BENCH_TRIPS_REQUESTS ?? 2_000);
const TICKS_PER_MS = 100 / 1000; // USER_HZ is 100 on Linux
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** User + system CPU time of a process so far, ms (with `children`, that of its children reaped too). */
function cpuMs(pid: number, children = false): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0)) / TICKS_PER_MS;
}

/** The database server's CPU time so far: the postmaster with the sessions it reaped, and its live processes. */
function databaseCpuMs(server: TestPostgres): number {
  const master = Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = cpuMs(master, true);
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === master) total += cpuMs(Number(pid));
    } catch {
      // ended meanwhile: its time is the postmaster's now
    }
  }
  return total;
}

interface Counts {
  statements: number;
  writes: number;
  reads: number;
  texts: Array<[string, number]>;
}

const CASES = [
  ['GET tracking', 'GET', undefined],
  ['POST 1 item', 'POST', JSON.stringify(createRequest(1))],
] as const;

/** Executor time (ms) since the last reset, by statement text with its whitespace folded (as pg-trips.cjs names them). */
async function executorTimes(stats: pg.Client): Promise<Map<string, number>> {
  const { rows } = await stats.query<{ query: string; ms: number }>("SELECT query, total_exec_time AS ms FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'");
  const times = new Map<string, number>();
  for (const { query, ms } of rows) {
    const text = query.replace(/\s+/g, ' ').trim();
    times.set(text, (times.get(text) ?? 0) + ms);
  }
  return times;
}

/** The executor time per request of the statement `shown` names (its lane, then its text cut short), or blanks. */
function executorColumn(executed: Map<string, number>, shown: string): string {
  const text = shown.replace(/^\w+ \| /, '');
  let ms = 0;
  for (const [query, total] of executed) if (query.startsWith(text)) ms += total;
  return ms > 0 ? `${Math.round((1000 * ms) / REQUESTS)}`.padStart(5) : '    -';
}

async function main(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const settings = Object.fromEntries((process.env.BENCH_PG_SETTINGS ?? '').split(',').filter((pair) => pair.includes('=')).map((pair) => pair.split('=', 2) as [string, string]));
  const server = await startPostgres({ shared_preload_libraries: 'pg_stat_statements', ...settings });
  try {
    const url = await server.freshDatabase();
    const stats = new pg.Client({ connectionString: url });
    await stats.connect();
    await stats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const seeded = await seedOrders({ url, template: await deliveredOrder(BENCH_TOKEN), count: 1_000 });
    const file = join(TMP, 'trips.json');
    const replica = await spawnServer('pg-trips', process.execPath, ['--require', './bench/pg-trips.cjs', 'dist/cli.js', '--port', '0', '--database-url', process.env.BENCH_TRIPS_SOCKET === '1' ? `${url}?host=${encodeURIComponent(server.dataDir)}` : url, '--token', BENCH_TOKEN, '--awb-delay', '1s'], {
      env: { NODE_ENV: 'production', BENCH_PG_PORT: new URL(server.serverUrl).port, BENCH_TRIPS_FILE: file },
      log: join(TMP, 'pg-trips.log'),
    });
    const counts = async (): Promise<Counts> => {
      rmSync(file, { force: true });
      replica.child.kill('SIGUSR1');
      for (let i = 0; i < 200 && !existsSync(file); i += 1) await sleep(10);
      return JSON.parse(readFileSync(file, 'utf8')) as Counts;
    };
    /** Until no job is due any more (the creates' AWB jobs and webhooks), at most 20 s. */
    const settled = async (): Promise<void> => {
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        for (const end = Date.now() + 20_000; Date.now() < end; await sleep(100)) {
          const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE kind = 'awb' OR due_at <= $1", [Date.now()]);
          if (rows[0]!.n === '0') break;
        }
      } finally {
        await db.end();
      }
      await sleep(300); // the batched journal and report writes
    };
    const rows: string[] = [];
    const texts: string[] = [];
    for (const [name, method, body] of CASES) {
      const options = { url: `${replica.url}${method === 'GET' ? `/v1/order/tracking/${seeded.last.awb}` : '/v1/order'}`, method, connections: 10, headers: HEADERS, ...(body ? { body } : {}) };
      await autocannon({ ...options, amount: Math.ceil(REQUESTS / 5) });
      await settled();
      await counts();
      await stats.query('SELECT pg_stat_statements_reset()');
      const before = { replica: cpuMs(replica.child.pid!), database: databaseCpuMs(server) };
      const result = await autocannon({ ...options, amount: REQUESTS });
      if (result.non2xx + result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      await settled();
      const c = await counts();
      const executed = await executorTimes(stats);
      const per = (n: number) => (n / REQUESTS).toFixed(2);
      const cpu = ((cpuMs(replica.child.pid!) - before.replica) / REQUESTS).toFixed(3);
      const db = ((databaseCpuMs(server) - before.database) / REQUESTS).toFixed(3);
      rows.push(`| ${name} | ${per(c.statements)} | ${per(c.writes)} | ${per(c.reads)} | ${cpu} | ${db} | ${Math.round(result.requests.average).toLocaleString('en')} |`);
      texts.push(
        `\n${name}, statements per request (with the database's executor time per request, µs; - where pg_stat_statements, which writes constants as parameters, keeps another text):\n`,
        ...c.texts.filter(([, n]) => n / REQUESTS >= 0.01).map(([text, n]) => `  ${(n / REQUESTS).toFixed(2)}  ${executorColumn(executed, text)}  ${text}`),
        `  executor time in all: ${Math.round((1000 * [...executed.values()].reduce((sum, ms) => sum + ms, 0)) / REQUESTS)} µs per request (statements sent by the replica's batches and trims included)`,
      );
    }
    await stop(replica.child);
    await stats.end();
    console.log(`${REQUESTS.toLocaleString('en')} requests per case, 10 connections, one replica, 1,000 orders.\n`);
    console.log('| case | statements / request | socket writes / request | socket reads / request | replica CPU ms / request | database CPU ms / request | requests/s (a busy machine moves it) |');
    console.log('|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    console.log(texts.join('\n'));
  } finally {
    await server.stop();
    rmSync(TMP, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
