/**
 * npm run bench: the sandbox in the configuration users run, beside its peers, in one run.
 *
 * Servers, each in its own process on 127.0.0.1, loaded in turn with autocannon (10
 * connections): the sandbox as `npm start` runs it (real clock, a data file,
 * `--awb-delay 1s` so AWB jobs run during the load), twice: at its default log level
 * (info, JSON lines) with its output written to a file, and at `--log-level silent`;
 * Prism mocking the same spec/openapi.yaml (static mock, one process) twice too: at its
 * default logging (info, its pretty lines; to a file, so without colours) and at
 * `-v silent`; an express floor answering bodies of the same size and json-server 1.
 * The two pairings with Prism are issue 48's like-for-like comparison: both silent, and
 * both logging to a file. Each pair is loaded one after the other, and after a sandbox's
 * load its AWBs are waited for, so they do not run while the next server is measured.
 *
 * Then the sandbox alone: 60 s of sustained 10-item creates with a health probe every
 * 50 ms (probe p99 and max, event-loop delay from monitorEventLoopDelay, stalls over
 * 50 ms and how many of them the main thread spent on a CPU, log lines written, and how
 * many AWBs were behind the creates when it stopped and how long they took to catch up,
 * from the metrics); partners on one sandbox (BENCH_PARTNERS_HEAVY, 4, partners each
 * with its own token making 10-item creates on 100 connections in all for
 * BENCH_PARTNERS_SECONDS, 20; partner B's order every 500 ms: how late B's AWBs came); a
 * one-year clock advance over 50,000 orders in flight (manual clock) with
 * the probe running; and a data file of 300,000 orders (written with the store's own
 * writer): start-up, RSS settled (and its peak), shutdown.
 *
 * Then PostgreSQL (bench/postgres.ts, issues 17 and 46): the embedded store loaded again
 * as the reference of the same run, then replicas on one embedded server, one and two of
 * them on a small database (one replica's rps against the embedded store's), one on a
 * database of a million seeded orders (start-up, RSS against the small database's,
 * POST 1 item p99).
 *
 * Prints the results and the targets (issues 15, 17 and 48) and writes bench/RESULTS.md and
 * bench/results.json. BENCH_SECONDS (default 8) sets the length of each throughput
 * case, BENCH_SUSTAIN_SECONDS (60) the sustained load, BENCH_ADVANCE_ORDERS (50000) and
 * BENCH_BIG_ORDERS (300000) the sizes; BENCH_PG_ORDERS (1000000) and
 * BENCH_PG_SMALL_ORDERS (1000) the sizes of the two PostgreSQL databases.
 * BENCH_POSTGRES=0 leaves the PostgreSQL part out; BENCH_ONLY=postgres runs only it,
 * and then replaces only the PostgreSQL section of bench/RESULTS.md and the `postgres`
 * key of bench/results.json, keeping the figures of the last full run.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { createRequest } from '../test/support/orders.js';
import { awbBacklog, awbsCaughtUp, freePort, metrics, scrape, HEADERS, load, loopDelay, memoryMb, percentile, probe, ROOT, SECONDS, spawnServer, steadyPartner, stop, TMP, type Figures, type LoopFigures } from './harness.js';
import { postgresSection, runPostgres } from './postgres.js';
import { BENCH_TOKEN, prefill } from './prefill.js';

const SUSTAIN_SECONDS = Number(process.env.BENCH_SUSTAIN_SECONDS ?? 60);
const ADVANCE_ORDERS = Number(process.env.BENCH_ADVANCE_ORDERS ?? 50_000);
const BIG_ORDERS = Number(process.env.BENCH_BIG_ORDERS ?? 300_000);
const PARTNERS_SECONDS = Number(process.env.BENCH_PARTNERS_SECONDS ?? 20);
const PARTNERS_CONNECTIONS = 100;
/** How many partners overload the sandbox side by side (each its own token, PARTNERS_CONNECTIONS shared out). */
const PARTNERS_HEAVY = Math.max(1, Number(process.env.BENCH_PARTNERS_HEAVY ?? 4));
const OTHER_TOKEN = 'bench-other-token';
const BIN = join(ROOT, 'node_modules/.bin');

/**
 * The stalls of a load, told apart: those the sandbox's main thread filled with its own
 * work, and the rest, where it was mostly off a CPU (on a shared machine: waiting for one).
 */
/** A histogram bound in seconds as the results say it. */
const seconds = (bound: number | undefined): string => (bound === undefined ? 'n/a' : bound === Infinity ? 'over 60 s' : `${bound} s`);

const stallsOf = (loop: LoopFigures): string =>
  `${loop.stalls} stalls > 50 ms, ${loop.cpuStalls} of them with ≥ 50 ms of the main thread on a CPU (longest ${loop.maxCpuStall} ms)`;
const RESULTS_MD = join(import.meta.dirname, 'RESULTS.md');
const RESULTS_JSON = join(import.meta.dirname, 'results.json');
const POSTGRES_HEADING = '## PostgreSQL';

interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  startupMs: number;
  /** Paths of the three cases on this server. */
  tracking: string;
  create: string;
}

async function sandboxServer(data: string, log: string, loopFile: string, extra: string[] = []): Promise<Server> {
  const server = await spawnServer('sandbox', process.execPath, ['--require', './bench/loop-monitor.cjs', 'dist/cli.js', '--port', '0', '--data', data, '--token', BENCH_TOKEN, '--awb-delay', '1s', ...extra], {
    env: { BENCH_LOOP_FILE: loopFile, NODE_ENV: 'production' },
    log,
  });
  // The AWB of an order whose journey has been played out: the tracking case reads a full history.
  const created = (await (await fetch(`${server.url}/v1/order`, { method: 'POST', headers: HEADERS, body: JSON.stringify(createRequest(1)) })).json()) as { order_numbers: string[] };
  const orderUrl = `${server.url}/__sandbox/orders/${created.order_numbers[0]}`;
  const { awb } = (await (await fetch(`${orderUrl}/awb`, { method: 'POST', headers: HEADERS })).json()) as { awb: string };
  while ((await fetch(`${orderUrl}/advance`, { method: 'POST', headers: HEADERS })).status === 200);
  return { name: 'sandbox', ...server, tracking: `/v1/order/tracking/${awb}`, create: '/v1/order' };
}

/** The sandbox at `--log-level silent`: the other half of the silent pairing with Prism. */
const SILENT_SANDBOX = 'sandbox --log-level silent';
const PRISM_VERSION = (() => {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules/@stoplight/prism-cli/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
})();
/** Prism at its default logging (level info, its pretty lines) written to a file, as the sandbox's log is. */
const PRISM_LOGGING = `Prism ${PRISM_VERSION}, default logging to a file`;
const PRISM_SILENT = `Prism ${PRISM_VERSION} -v silent`;

/**
 * Prism mocking spec/openapi.yaml, the sandbox's own spec (its operations, request
 * validation and examples), in one process: `--multiprocess` is Prism's default only
 * under NODE_ENV=production, and would give its log formatting a process (a core) of
 * its own, where the sandbox writes its log from its one process. Its output goes to a
 * file (spawnServer), not a terminal, so its pretty lines come without colours.
 */
async function prism(silent: boolean): Promise<Server> {
  const port = freePort();
  const args = ['mock', 'spec/openapi.yaml', '--host', '127.0.0.1', '--port', String(port), '--multiprocess=false', ...(silent ? ['-v', 'silent'] : [])];
  const server = await spawnServer(silent ? 'prism-silent' : 'prism', join(BIN, 'prism'), args, {
    env: { SCARF_ANALYTICS: 'false' },
    // At -v silent Prism prints no listening line: it is ready once it answers.
    ...(silent ? { readyUrl: `http://127.0.0.1:${port}/v1/order/tracking/JN0000000001` } : { ready: /Prism is listening on (http:\/\/[\w.:]+)/ }),
  });
  return { name: silent ? PRISM_SILENT : PRISM_LOGGING, ...server, tracking: '/v1/order/tracking/JN0000000001', create: '/v1/order' };
}

async function peers(): Promise<Server[]> {
  const servers: Server[] = [];
  const express = await spawnServer('express', process.execPath, [join(import.meta.dirname, 'ref-express.mjs')], { env: { NODE_ENV: 'production' } });
  servers.push({ name: 'express floor, same-size bodies', ...express, tracking: '/full/v1/order/tracking/JN0000000001', create: '/v1/order' });
  if (existsSync(join(BIN, 'json-server'))) {
    const db = join(TMP, 'json-server.json');
    writeFileSync(db, JSON.stringify({ tracking: [{ id: 'JN0000000001', ...JSON.parse(readFileSync(join(import.meta.dirname, 'tracking-body.json'), 'utf8')) }], order: [] }));
    const port = freePort();
    const jsonServer = await spawnServer('json-server', join(BIN, 'json-server'), [db, '--port', String(port), '--host', '127.0.0.1'], { ready: /JSON Server started on PORT :(\d+)/ });
    servers.push({ name: 'json-server 1', ...jsonServer, tracking: '/tracking/JN0000000001', create: '/order' });
  }
  return servers;
}

/** BENCH_ONLY=postgres: the PostgreSQL part alone, its section and key replaced in the results of the last full run. */
async function postgresOnly(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  const results = await runPostgres();
  const section = postgresSection(results, new Date(), revision()).join('\n');
  console.log(section);
  const before = existsSync(RESULTS_MD) ? readFileSync(RESULTS_MD, 'utf8') : '';
  const at = before.indexOf(`\n${POSTGRES_HEADING}`);
  writeFileSync(RESULTS_MD, `${(at === -1 ? before : before.slice(0, at)).trimEnd()}\n\n${section}`);
  const json = existsSync(RESULTS_JSON) ? (JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(RESULTS_JSON, `${JSON.stringify({ ...json, postgres: { date: new Date().toISOString(), ...results } }, null, 2)}\n`);
}

/** The commit measured, marked when the checkout has changes of its own (outside bench/RESULTS.md and results.json), or "no git checkout". */
function revision(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }).trim();
    // A checkout of its own, not a folder inside some other repository.
    if (realpathSync(git('rev-parse', '--show-toplevel')) !== realpathSync(ROOT)) return 'no git checkout';
    const sha = git('rev-parse', '--short', 'HEAD');
    const changed = git('status', '--porcelain', '--', '.', ':!bench/RESULTS.md', ':!bench/results.json');
    return changed === '' ? `commit ${sha}` : `commit ${sha} with uncommitted changes`;
  } catch {
    return 'no git checkout';
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'postgres') return postgresOnly();
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const loopFile = join(TMP, 'loop.json');
  const log = join(TMP, 'sandbox.log');
  const post1 = JSON.stringify(createRequest(1));
  const post10 = JSON.stringify(createRequest(10));

  // 1. Throughput, every server in turn on each case; each sandbox beside the Prism it is paired with.
  if (!existsSync(join(BIN, 'prism'))) throw new Error('Prism is not installed (node_modules/.bin/prism, from @stoplight/prism-cli): npm ci installs it.');
  const silent = { ...(await sandboxServer(join(TMP, 'silent.json'), join(TMP, 'silent.log'), join(TMP, 'silent-loop.json'), ['--log-level', 'silent'])), name: SILENT_SANDBOX };
  const prismSilent = await prism(true);
  const sandbox = await sandboxServer(join(TMP, 'sandbox.json'), log, loopFile);
  const prismLogging = await prism(false);
  const others = [silent, prismSilent, prismLogging, ...(await peers())];
  const servers = [silent, prismSilent, sandbox, prismLogging, ...others.slice(3)];
  const rows: Array<{ server: string; case: string } & Figures> = [];
  for (const [name, method, pathOf, body] of [
    ['GET tracking', 'GET', (s: Server) => s.tracking, undefined],
    ['POST 1 item', 'POST', (s: Server) => s.create, post1],
    ['POST 10 items', 'POST', (s: Server) => s.create, post10],
  ] as const) {
    for (const server of servers) {
      rows.push({ server: server.name, case: name, ...(await load(`${server.url}${pathOf(server)}`, method, body)) });
      if (server.name.startsWith('sandbox') && !(await awbsCaughtUp(server.url))) console.log(`${server.name}: AWBs still behind 120 s after ${name}`);
    }
    console.log(`${name}: done`);
  }
  const startups = Object.fromEntries(servers.map((s) => [s.name, Math.round(s.startupMs)]));
  for (const server of others) await stop(server.child);

  // 2. Sustained 10-item creates with a health probe.
  await loopDelay(sandbox.child, loopFile);
  const linesBefore = readFileSync(log, 'utf8').split('\n').length;
  const sustainedProbe = await probe(sandbox.url);
  const metricsBefore = await metrics(sandbox.url);
  const sustained = await load(`${sandbox.url}/v1/order`, 'POST', post10, SUSTAIN_SECONDS);
  const metricsAtEnd = await scrape(sandbox.url);
  const sustainedWaits = await sustainedProbe.stop();
  const sustainedLoop = await loopDelay(sandbox.child, loopFile);
  const logLines = readFileSync(log, 'utf8').split('\n').length - linesBefore;
  const backlog = await awbBacklog(sandbox.url, metricsAtEnd, metricsBefore);
  await stop(sandbox.child);
  console.log('sustained load: done');

  // 2b. Partners on one sandbox: PARTNERS_HEAVY of them overload it side by side, each
  // with its own token (the bench's and bench-heavy-2, ...), while B creates an order every 500 ms.
  const heavyTokens = [BENCH_TOKEN, ...Array.from({ length: PARTNERS_HEAVY - 1 }, (_, i) => `bench-heavy-${i + 2}`)];
  const shared = await sandboxServer(join(TMP, 'partners.json'), join(TMP, 'partners.log'), loopFile, [...heavyTokens.slice(1).flatMap((token) => ['--token', token]), '--token', OTHER_TOKEN]);
  const partnerB = steadyPartner(shared.url, OTHER_TOKEN, post1, 500);
  const partnersBefore = await metrics(shared.url);
  const heavyConnections = Math.max(1, Math.floor(PARTNERS_CONNECTIONS / PARTNERS_HEAVY));
  const overloads = await Promise.all(
    heavyTokens.map((token) => load(`${shared.url}/v1/order`, 'POST', post10, PARTNERS_SECONDS, heavyConnections, { authorization: `Bearer ${token}`, 'content-type': 'application/json' })),
  );
  const overload = { rps: overloads.reduce((sum, f) => sum + f.rps, 0), p99: Math.max(...overloads.map((f) => f.p99)), errors: overloads.reduce((sum, f) => sum + f.errors, 0) };
  const partnersAtEnd = await scrape(shared.url);
  const bLate = await partnerB.stop(3_000);
  const aBacklog = await awbBacklog(shared.url, partnersAtEnd, partnersBefore, 1);
  await stop(shared.child);
  const bWaiting = bLate.filter((ms) => ms === Infinity).length;
  const bDone = bLate.filter((ms) => ms !== Infinity);
  const partners = { seconds: PARTNERS_SECONDS, connections: PARTNERS_CONNECTIONS, heavy: PARTNERS_HEAVY, a: overload, aBehind: aBacklog.behind, bOrders: bLate.length, bLateP50: percentile(bDone, 50), bLateMax: bDone.length > 0 ? Math.max(...bDone) : undefined, bWaiting, bCreateP50: percentile(partnerB.createMs, 50), bCreateMax: Math.round(Math.max(0, ...partnerB.createMs)) };
  console.log('two partners: done');

  // 3. A one-year advance over orders in flight (manual clock).
  const manual = await sandboxServer(join(TMP, 'advance.json'), join(TMP, 'advance.log'), loopFile, ['--clock', 'manual', '--max-items', '1000']);
  for (let made = 0; made < ADVANCE_ORDERS; made += 1000) {
    const res = await fetch(`${manual.url}/v1/order`, { method: 'POST', headers: HEADERS, body: JSON.stringify(createRequest(Math.min(1000, ADVANCE_ORDERS - made))) });
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
  }
  await loopDelay(manual.child, loopFile);
  const advanceProbe = await probe(manual.url);
  const advanceStarted = performance.now();
  const advanced = await fetch(`${manual.url}/__sandbox/clock/advance`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ ms: 365 * 86_400_000 }), signal: AbortSignal.timeout(600_000) });
  const advanceMs = Math.round(performance.now() - advanceStarted);
  const advanceWaits = await advanceProbe.stop();
  const advanceLoop = await loopDelay(manual.child, loopFile);
  if (advanced.status !== 200) throw new Error(`advance answered ${advanced.status}`);
  await stop(manual.child);
  console.log('one-year advance: done');

  // 4. A data file of many orders: start-up, RSS settled, shutdown.
  const bigData = join(TMP, 'big.json');
  await prefill(bigData, BIG_ORDERS);
  const big = await spawnServer('sandbox', process.execPath, ['dist/cli.js', '--port', '0', '--data', bigData, '--token', BENCH_TOKEN, '--log-level', 'warn'], { env: { NODE_ENV: 'production' } });
  await new Promise((r) => setTimeout(r, 5_000));
  const bigRss = memoryMb(big.child.pid!, 'VmRSS');
  // The highest RSS so far: the heap is let grow faster while the data file loads (src/cli.ts).
  const bigPeak = memoryMb(big.child.pid!, 'VmHWM');
  const shutdownMs = await stop(big.child);
  const emptyStart = await spawnServer('sandbox', process.execPath, ['dist/cli.js', '--port', '0', '--data', join(TMP, 'empty.json'), '--token', BENCH_TOKEN], { env: { NODE_ENV: 'production' } });
  const emptyStartupMs = Math.round(emptyStart.startupMs);
  await stop(emptyStart.child);
  console.log('big data file: done');
  rmSync(TMP, { recursive: true, force: true });

  const figure = (server: string, c: string) => rows.find((r) => r.server === server && r.case === c);
  const ratio = (c: string, peer: string, mineName = 'sandbox') => {
    const mine = figure(mineName, c)?.rps;
    const theirs = figure(peer, c)?.rps;
    return mine && theirs ? mine / theirs : undefined;
  };
  const express = 'express floor, same-size bodies';
  const pairings = (['GET tracking', 'POST 1 item', 'POST 10 items'] as const).map((c) => ({
    case: c,
    silent: { sandbox: figure(SILENT_SANDBOX, c)?.rps, prism: figure(PRISM_SILENT, c)?.rps, ratio: ratio(c, PRISM_SILENT, SILENT_SANDBOX) },
    logging: { sandbox: figure('sandbox', c)?.rps, prism: figure(PRISM_LOGGING, c)?.rps, ratio: ratio(c, PRISM_LOGGING) },
  }));
  // [target, issue, measured, met?, unit]
  const targets: Array<[string, string, number | undefined, (v: number) => boolean, string]> = [
    ['GET tracking ≥ 1.0× Prism, both silent', '48', ratio('GET tracking', PRISM_SILENT, SILENT_SANDBOX), (v) => v >= 1, '×'],
    ['GET tracking ≥ 1.0× Prism, both logging to a file', '48', ratio('GET tracking', PRISM_LOGGING), (v) => v >= 1, '×'],
    ['POST 1 item ≥ 0.75× Prism, both silent', '48', ratio('POST 1 item', PRISM_SILENT, SILENT_SANDBOX), (v) => v >= 0.75, '×'],
    ['POST 1 item ≥ 0.75× Prism, both logging to a file', '48', ratio('POST 1 item', PRISM_LOGGING), (v) => v >= 0.75, '×'],
    ['POST 10 items p99 ≤ 25 ms (sandbox as users run it)', '48', figure('sandbox', 'POST 10 items')?.p99, (v) => v <= 25, 'ms'],
    ['GET tracking ≥ 0.9× the express floor', '15', ratio('GET tracking', express), (v) => v >= 0.9, '×'],
    ['POST 1 item ≥ 0.75× the express floor', '15', ratio('POST 1 item', express), (v) => v >= 0.75, '×'],
    ['POST 10 items ≥ 0.3× the express floor', '15', ratio('POST 10 items', express), (v) => v >= 0.3, '×'],
    ['p99 ≤ 25 ms in every throughput case (sandbox as users run it)', '15', Math.max(...rows.filter((r) => r.server === 'sandbox').map((r) => r.p99)), (v) => v <= 25, 'ms'],
    [`sustained 10-item creates (${SUSTAIN_SECONDS} s): probe max ≤ 100 ms`, '15', Math.round(Math.max(...sustainedWaits)), (v) => v <= 100, 'ms'],
    [`sustained 10-item creates (${SUSTAIN_SECONDS} s): event-loop delay p99.9 ≤ 50 ms`, '15, 48', sustainedLoop.p999, (v) => v <= 50, 'ms'],
    [`one-year advance over ${ADVANCE_ORDERS.toLocaleString('en')} orders: probe max ≤ 100 ms`, '15', Math.round(Math.max(...advanceWaits)), (v) => v <= 100, 'ms'],
    ['one-year advance: event-loop delay p99.9 ≤ 50 ms', '15', advanceLoop.p999, (v) => v <= 50, 'ms'],
    [`RSS settled ≤ 150 MB per 100k orders (${BIG_ORDERS.toLocaleString('en')} orders)`, '15', Math.round((bigRss * 100_000) / BIG_ORDERS), (v) => v <= 150, 'MB/100k'],
    [`start-up at ${BIG_ORDERS.toLocaleString('en')} orders ≤ 5 s`, '15', Math.round(big.startupMs), (v) => v <= 5_000, 'ms'],
    ['start-up empty ≤ 1.0× Prism’s (default logging)', '15', startups[PRISM_LOGGING] ? emptyStartupMs / startups[PRISM_LOGGING]! : undefined, (v) => v <= 1, '×'],
  ];
  const shown = (v: number | undefined, unit: string) => (v === undefined ? 'not measured' : unit === '×' ? `${v.toFixed(2)}×` : `${v.toLocaleString('en')} ${unit}`);
  const shownRps = (v: number | undefined) => (v === undefined ? 'n/a' : v.toLocaleString('en'));
  const shownRatio = (v: number | undefined) => (v === undefined ? 'n/a' : `${v.toFixed(2)}×`);
  const lines = [
    '# Benchmark results',
    '',
    `Run ${new Date().toISOString()} by \`npm run bench\` at ${revision()} on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}.`,
    `autocannon, 10 connections, 2 s warm-up then ${SECONDS} s per case, servers loaded in turn (after a sandbox's load, its AWBs are waited for). The sandbox as users run it: real clock, a data file, --awb-delay 1s (AWB jobs run during the load), log level info (JSON lines) written to a file; "${SILENT_SANDBOX}" is the same at --log-level silent.`,
    `Prism mocks the sandbox's own spec/openapi.yaml (static mock, one process): "${PRISM_LOGGING}" at its default level (info) in its pretty format, written to a file (so without colours), "${PRISM_SILENT}" logging nothing.`,
    '',
    '| server | case | rps | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.server} | ${r.case} | ${r.rps.toLocaleString('en')} | ${r.p50} | ${r.p99} | ${r.errors} |`),
    '',
    '## Against Prism, like for like (issue 48)',
    '',
    `Two pairings in this run: both silent (the sandbox at --log-level silent, Prism -v silent), and both logging every request to a file (the sandbox's JSON lines at its default level, Prism's default pretty lines). These replace issue 15's targets against Prism (GET 1.5×, POST 1 item 1.2×), which set the sandbox logging JSON lines against Prism's pretty logging alone.`,
    '',
    '| case | both silent: sandbox rps | Prism rps | ratio | both logging: sandbox rps | Prism rps | ratio |',
    '|---|---|---|---|---|---|---|',
    ...pairings.map((p) => `| ${p.case} | ${shownRps(p.silent.sandbox)} | ${shownRps(p.silent.prism)} | ${shownRatio(p.silent.ratio)} | ${shownRps(p.logging.sandbox)} | ${shownRps(p.logging.prism)} | ${shownRatio(p.logging.ratio)} |`),
    '',
    '| server | start-up ms |',
    '|---|---|',
    ...Object.entries(startups).map(([name, ms]) => `| ${name} | ${ms} |`),
    `| sandbox, empty data file, alone | ${emptyStartupMs} |`,
    `| sandbox, ${BIG_ORDERS.toLocaleString('en')} orders | ${Math.round(big.startupMs)} |`,
    '',
    `Sustained 10-item creates for ${SUSTAIN_SECONDS} s: ${sustained.rps.toLocaleString('en')} rps, p99 ${sustained.p99} ms; health probe every 50 ms: p99 ${percentile(sustainedWaits, 99)} ms, max ${Math.round(Math.max(...sustainedWaits))} ms; event-loop delay p99 ${sustainedLoop.p99} ms, p99.9 ${sustainedLoop.p999} ms, max ${sustainedLoop.max} ms; ${stallsOf(sustainedLoop)}; ${logLines.toLocaleString('en')} log lines written. AWBs not generated yet when the load stopped (the last second's creates among them, not due yet): ${backlog.behind.toLocaleString('en')}, ${backlog.caughtUpS === undefined ? 'still some 180 s later' : `all generated ${backlog.caughtUpS} s later`}; the load's AWB jobs ran after their due time by at most ${seconds(backlog.lateP99S)} (99%) and ${seconds(backlog.lateMaxS)} (all; the bounds of \`sandbox_scheduler_lag_seconds\`).`,
    '',
    `Partners on one sandbox: ${PARTNERS_HEAVY === 1 ? "partner A's 10-item creates" : `${PARTNERS_HEAVY} partners' 10-item creates, each with its own token,`} on ${PARTNERS_CONNECTIONS} connections${PARTNERS_HEAVY === 1 ? '' : ' in all'} for ${PARTNERS_SECONDS} s (${overload.rps.toLocaleString('en')} rps, p99 ${overload.p99} ms; ${aBacklog.behind.toLocaleString('en')} of their AWBs not generated yet when they stopped), partner B's 1-item create every 500 ms with its own token: ${bLate.length} orders (each create answered in ${partners.bCreateP50} ms at the median, ${partners.bCreateMax} ms at most, timed from the process running the load), whose AWBs came ${partners.bLateP50} ms (median) and at most ${partners.bLateMax ?? 'n/a'} ms after their due time${bWaiting > 0 ? `; ${bWaiting} not generated 3 s after the load` : ''}.`,
    '',
    `One-year advance over ${ADVANCE_ORDERS.toLocaleString('en')} orders in flight: ${advanceMs.toLocaleString('en')} ms; probe p99 ${percentile(advanceWaits, 99)} ms, max ${Math.round(Math.max(...advanceWaits))} ms (${advanceWaits.length} probes); event-loop delay p99.9 ${advanceLoop.p999} ms, max ${advanceLoop.max} ms; ${stallsOf(advanceLoop)}.`,
    '',
    `${BIG_ORDERS.toLocaleString('en')} orders: start-up ${Math.round(big.startupMs).toLocaleString('en')} ms, RSS settled ${bigRss} MB (peak while loading ${bigPeak} MB), shutdown ${shutdownMs} ms.`,
    '',
    '## Targets',
    '',
    '| target | issue | measured | met |',
    '|---|---|---|---|',
    ...targets.map(([name, issue, value, ok, unit]) => `| ${name} | ${issue} | ${shown(value, unit)} | ${value === undefined ? 'not measured' : ok(value) ? 'yes' : '**no**'} |`),
    '',
  ];
  const postgres = process.env.BENCH_POSTGRES === '0' ? undefined : await runPostgres();
  if (postgres) lines.push(...postgresSection(postgres));
  const text = lines.join('\n');
  console.log(text);
  writeFileSync(RESULTS_MD, text);
  writeFileSync(
    RESULTS_JSON,
    `${JSON.stringify({ date: new Date().toISOString(), seconds: SECONDS, rows, pairings, startups, sustained: { ...sustained, probeMax: Math.max(...sustainedWaits), loop: sustainedLoop, logLines, awbBacklog: backlog }, partners, advance: { ms: advanceMs, probeMax: Math.max(...advanceWaits), loop: advanceLoop }, big: { orders: BIG_ORDERS, startupMs: big.startupMs, rssMb: bigRss, peakRssMb: bigPeak, shutdownMs }, ...(postgres ? { postgres } : {}) }, null, 2)}\n`,
  );
}

await main();
