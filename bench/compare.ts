/**
 * npm run bench:compare -- <git ref> : throughput of this checkout against an earlier
 * commit, in one run. The earlier commit is built in a git worktree (in the system's temp folder);
 * both sandboxes run at once, each in its own process on 127.0.0.1, in the
 * configuration users run (real clock, a data file, AWB jobs running: --awb-delay 3s),
 * and each case loads them in turn, BENCH_ROUNDS times (default 3); the median of each
 * is compared. Prints a table and writes bench/COMPARE.md.
 *
 * Beside requests per second it measures what each request cost the server: the CPU time
 * the sandbox's process used during the load (user + system, from /proc/PID/stat) divided by
 * the requests it answered. On a busy or shared machine throughput swings with whatever else
 * runs (one build's rounds have spread from 0.6k to 4.5k rps here), while the CPU time a
 * request takes moves far less: time spent waiting for a core is not counted in it. A
 * case passes when either figure is within the tolerance.
 *
 * BENCH_SECONDS (default 5) sets the length of each load; BENCH_TOLERANCE (default 10) the
 * percentage below the earlier commit's figure that still passes.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { createRequest } from '../test/support/orders.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TOLERANCE = Number(process.env.BENCH_TOLERANCE ?? 10) / 100;
const ROOT = resolve(import.meta.dirname, '..');
const TMP = join(import.meta.dirname, 'tmp');
// Outside the checkout, so that no test runner or type check finds its files.
const BASE = join(tmpdir(), 'shipping-sandbox-bench-base');
const TOKEN = 'bench-token';

interface Running {
  name: string;
  url: string;
  child: ChildProcess;
  awb: string;
}

const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });

/** Checks the commit out beside this one and builds it, with the dependencies its own lock file names. */
function buildBase(ref: string): string {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  if (existsSync(BASE)) run('git', ['worktree', 'remove', '--force', BASE], ROOT);
  run('git', ['worktree', 'add', '--detach', BASE, sha], ROOT);
  run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], BASE);
  run('npx', ['tsc', '-p', 'tsconfig.build.json'], BASE);
  return sha;
}

async function start(name: string, dir: string): Promise<Running> {
  const data = join(TMP, `${name}.json`);
  const child = spawn(process.execPath, [join(dir, 'dist/cli.js'), '--port', '0', '--data', data, '--token', TOKEN, '--log-level', 'warn'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${out}`)));
  });
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const created = (await (await fetch(`${url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) })).json()) as { order_numbers: string[] };
  const orderUrl = `${url}/__sandbox/orders/${created.order_numbers[0]}`;
  const state = (await (await fetch(`${orderUrl}/awb`, { method: 'POST', headers })).json()) as { awb: string };
  // Play the whole journey, so the tracking answer carries a full history (409 once no step is left).
  while ((await fetch(`${orderUrl}/advance`, { method: 'POST', headers })).status === 200);
  return { name, url, child, awb: state.awb };
}

/** CPU time (user + system) the process has used so far, in clock ticks of 10 ms (USER_HZ). */
function cpuTicks(pid: number): number {
  // Fields 14 and 15 of /proc/PID/stat; the command name (field 2) may hold spaces, so count after its ')'.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

interface Figure {
  rps: number;
  /** Server CPU time per answered request, in microseconds. */
  cpuUs: number;
}

async function load(server: Running, url: string, method: 'GET' | 'POST', body?: string): Promise<Figure> {
  const options = { url, method, connections: 10, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body } : {}) };
  await autocannon({ ...options, duration: 1 });
  const ticks = cpuTicks(server.child.pid!);
  const result = await autocannon({ ...options, duration: SECONDS });
  const used = cpuTicks(server.child.pid!) - ticks;
  if (result.errors + result.non2xx + result.timeouts > 0) throw new Error(`${method} ${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: Math.round(result.requests.average), cpuUs: Math.round((used * 10_000) / result.requests.total) };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const ref = process.argv[2];
  if (!ref) throw new Error('usage: npm run bench:compare -- <git ref of the commit before the change>');
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const sha = buildBase(ref);
  run('npx', ['tsc', '-p', 'tsconfig.build.json'], ROOT);
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const servers = [await start('before', BASE), await start('after', ROOT)];
  const stopAll = () => servers.forEach((server) => server.child.kill('SIGTERM'));
  process.once('exit', stopAll);
  const post1 = JSON.stringify(createRequest(1));
  const post10 = JSON.stringify(createRequest(10));
  const cases = [
    ['GET tracking', 'GET', (s: Running) => `${s.url}/v1/order/tracking/${s.awb}`, undefined],
    ['POST 1 item', 'POST', (s: Running) => `${s.url}/v1/order`, post1],
    ['POST 10 items', 'POST', (s: Running) => `${s.url}/v1/order`, post10],
  ] as const;
  const figures = new Map<string, Figure[]>();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, method, path, body] of cases) {
      // Alternate which goes first, so neither always meets the machine warmer.
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        const key = `${name}|${server.name}`;
        figures.set(key, [...(figures.get(key) ?? []), await load(server, path(server), method, body)]);
      }
    }
  }
  stopAll();
  const lines = [
    '# Before and after',
    '',
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}: before = ${sha.slice(0, 7)} (${ref}), after = ${head} (this checkout).`,
    `Both from dist/, real clock, a data file, --awb-delay 3s (AWB jobs run during the load); autocannon, 10 connections, ${SECONDS} s per load; ${ROUNDS} rounds, loads interleaved; medians.`,
    'CPU per request: the server process\'s user + system time during the load over the requests it answered (time waiting for a core is not in it, so it moves far less than rps on a busy machine).',
    '',
    `| case | before rps | after rps | after / before | before CPU µs/req | after CPU µs/req | before / after | within ${TOLERANCE * 100}% or better |`,
    '|---|---|---|---|---|---|---|---|',
  ];
  let ok = true;
  for (const [name] of cases) {
    const before = figures.get(`${name}|before`)!;
    const after = figures.get(`${name}|after`)!;
    const rps = [median(before.map((f) => f.rps)), median(after.map((f) => f.rps))] as const;
    const cpu = [median(before.map((f) => f.cpuUs)), median(after.map((f) => f.cpuUs))] as const;
    const rpsRatio = rps[1] / rps[0];
    const cpuRatio = cpu[0] / cpu[1];
    const within = rpsRatio >= 1 - TOLERANCE || cpuRatio >= 1 - TOLERANCE;
    ok &&= within;
    lines.push(
      `| ${name} | ${rps[0].toLocaleString('en')} | ${rps[1].toLocaleString('en')} | ${rpsRatio.toFixed(3)} | ${cpu[0]} | ${cpu[1]} | ${cpuRatio.toFixed(3)} | ${within ? 'yes' : '**no**'} |`,
    );
  }
  lines.push(
    '',
    `Every round (rps, CPU µs/req): ${[...figures].map(([k, v]) => `${k.replace('|', ' ')} ${v.map((f) => `${f.rps}, ${f.cpuUs}`).join(' / ')}`).join('; ')}.`,
    '',
  );
  const text = lines.join('\n');
  console.log(text);
  writeFileSync(join(import.meta.dirname, 'COMPARE.md'), text);
  run('git', ['worktree', 'remove', '--force', BASE], ROOT);
  rmSync(TMP, { recursive: true, force: true });
  if (!ok) process.exitCode = 1;
}

await main();
