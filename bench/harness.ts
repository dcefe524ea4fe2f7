/**
 * What bench/run.ts and bench/postgres.ts share: servers started as processes on
 * 127.0.0.1 (stopped when the run ends, also when it fails half way), autocannon loads,
 * memory and event-loop figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BENCH_TOKEN } from './prefill.js';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
export const ROOT = join(import.meta.dirname, '..');
export const TMP = join(import.meta.dirname, 'tmp');
export const HEADERS = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * Starts a server and waits for the line that says where it listens. Its output goes to
 * `log` (a file, as users run it) or is discarded; the line is found by reading the file.
 */
export async function spawnServer(name: string, command: string, args: string[], options: { env?: Record<string, string>; log?: string; ready?: RegExp } = {}): Promise<{ url: string; child: ChildProcess; startupMs: number }> {
  const log = options.log ?? join(TMP, `${name}-${Date.now()}.log`);
  const fd = openSync(log, 'w');
  const began = performance.now();
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', fd, fd], env: { ...process.env, ...options.env } });
  started.add(child);
  closeSync(fd);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  for (;;) {
    const out = readFileSync(log, 'utf8');
    const match = (options.ready ?? /listening on (http:\/\/[\w.:[\]]+)/i).exec(out);
    if (match) return { url: /^\d+$/.test(match[1]!) ? `http://127.0.0.1:${match[1]}` : match[1]!.replace('localhost', '127.0.0.1'), child, startupMs: performance.now() - began };
    if (exited !== undefined) throw new Error(`${name} exited with ${exited}: ${out.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Every server this run started: stopped on exit, also when the run fails half way. */
export const started = new Set<ChildProcess>();
process.once('exit', () => started.forEach((child) => child.exitCode === null && child.kill('SIGKILL')));

/** A port for the peers that cannot take 0 (a random high one: the run is bounded and on 127.0.0.1). */
export const freePort = (): number => 40_000 + Math.floor(Math.random() * 10_000);

export function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024);
}

export async function stop(child: ChildProcess): Promise<number> {
  const began = performance.now();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  return Math.round(performance.now() - began);
}

/** `url` may name several servers: autocannon spreads the connections over them (connection i to url i mod n) and reports one histogram. */
export async function load(url: string | string[], method: 'GET' | 'POST', body?: string, seconds = SECONDS): Promise<Figures> {
  const options = { url, method, connections: 10, headers: HEADERS, ...(body ? { body } : {}) };
  await autocannon({ ...options, duration: 2 }); // warm-up
  const result = await autocannon({ ...options, duration: seconds });
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx + result.timeouts };
}

/** Event-loop figures of a sandbox started with bench/loop-monitor.cjs, since the last call. */
export interface LoopFigures {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** Gaps of more than 50 ms between runs of a 10 ms timer. */
  stalls: number;
  /** Of those, the gaps in which the main thread was on a CPU for 50 ms or more (not waiting for one on a shared machine). */
  cpuStalls: number;
  /** The most time on a CPU within one gap, ms. */
  maxCpuStall: number;
}

/** Event-loop delay of a sandbox started with bench/loop-monitor.cjs, since the last call. */
export async function loopDelay(child: ChildProcess, file: string): Promise<LoopFigures> {
  rmSync(file, { force: true });
  child.kill('SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(file); i += 1) await new Promise((r) => setTimeout(r, 20));
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * Probes GET /__sandbox/health every 50 ms until stopped, from a process of its own
 * (bench/probe.cjs), so a wait leaves out the turns this process spends on autocannon's
 * load (the probe still shares the machine's cores); answers the waits in ms once the
 * probe is running.
 */
export async function probe(url: string): Promise<{ stop: () => Promise<number[]> }> {
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'probe.cjs'), url], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.add(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  // 'close', not 'exit': the waits are read in full once the probe's output is closed.
  const exited = new Promise<string>((resolve) => child.once('close', (code, signal) => resolve(signal ?? String(code))));
  for (let i = 0; i < 250 && !out.startsWith('probing\n'); i += 1) await new Promise((r) => setTimeout(r, 20));
  if (!out.startsWith('probing\n')) throw new Error('the health probe (bench/probe.cjs) did not start');
  return {
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      started.delete(child);
      const waits = out.slice('probing\n'.length);
      if (code !== '0' || !waits.startsWith('[')) throw new Error(`the health probe (bench/probe.cjs) ended with ${code} and printed: ${waits.slice(0, 200)}`);
      return JSON.parse(waits) as number[];
    },
  };
}

export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
};

/** A counter of a sandbox's Prometheus metrics (the bench sets no admin token, so they need none). */
export async function metricsCounter(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/__sandbox/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`The metrics have no ${name}.`);
  return Number(line.split(' ')[1]);
}

/**
 * How far a sandbox's AWB generation is behind its creates: the AWBs not generated (nor
 * failed) yet of the orders created so far, then how many seconds until they all are
 * (undefined when that takes more than `withinMs`). From its metrics.
 */
export async function awbBacklog(url: string, withinMs = 180_000): Promise<{ pending: number; caughtUpS: number | undefined }> {
  const behind = async () =>
    (await metricsCounter(url, 'sandbox_orders_created_total')) - (await metricsCounter(url, 'sandbox_awbs_generated_total')) - (await metricsCounter(url, 'sandbox_awbs_failed_total'));
  const began = performance.now();
  const pending = await behind();
  for (let left = pending; left > 0; left = await behind()) {
    if (performance.now() - began > withinMs) return { pending, caughtUpS: undefined };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { pending, caughtUpS: Math.round((performance.now() - began) / 100) / 10 };
}
