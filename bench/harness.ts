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
 * A server that prints no such line (Prism at `-v silent`) is given `readyUrl` instead:
 * it is ready once that URL answers, whatever the status.
 */
export async function spawnServer(name: string, command: string, args: string[], options: { env?: Record<string, string>; log?: string; ready?: RegExp; readyUrl?: string } = {}): Promise<{ url: string; child: ChildProcess; startupMs: number }> {
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
    if (options.readyUrl !== undefined) {
      if (await answers(options.readyUrl)) return { url: new URL(options.readyUrl).origin, child, startupMs: performance.now() - began };
      if (exited !== undefined) throw new Error(`${name} exited with ${exited}: ${out.slice(-2000)}`);
      continue;
    }
    const match = (options.ready ?? /listening on (http:\/\/[\w.:[\]]+)/i).exec(out);
    if (match) return { url: /^\d+$/.test(match[1]!) ? `http://127.0.0.1:${match[1]}` : match[1]!.replace('localhost', '127.0.0.1'), child, startupMs: performance.now() - began };
    if (exited !== undefined) throw new Error(`${name} exited with ${exited}: ${out.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Whether a server answers `url` at all (any status): it listens. */
async function answers(url: string): Promise<boolean> {
  try {
    await (await fetch(url, { signal: AbortSignal.timeout(1_000) })).arrayBuffer();
    return true;
  } catch {
    await new Promise((r) => setTimeout(r, 5));
    return false;
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
  if (child.exitCode !== null || child.signalCode !== null) return 0;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  return Math.round(performance.now() - began);
}

/** `url` may name several servers: autocannon spreads the connections over them (connection i to url i mod n) and reports one histogram. */
export async function load(url: string | string[], method: 'GET' | 'POST', body?: string, seconds = SECONDS, connections = 10, headers: Record<string, string> = HEADERS): Promise<Figures> {
  const options = { url, method, connections, headers, ...(body ? { body } : {}) };
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

/**
 * A sandbox's Prometheus metrics, one scrape, as sample lines by name and labels (e.g.
 * `sandbox_awbs_generated_total` or `sandbox_scheduler_lag_seconds_bucket{kind="awb",le="1"}`).
 * The bench's sandboxes have no admin token; one in the environment is sent.
 */
export async function metrics(url: string): Promise<Map<string, number>> {
  const admin = process.env.SANDBOX_ADMIN_TOKEN;
  const res = await fetch(`${url}/__sandbox/metrics`, { headers: admin ? { authorization: `Bearer ${admin}` } : {} });
  if (!res.ok) throw new Error(`GET /__sandbox/metrics answered ${res.status}.`);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** A scrape of the metrics (`metrics`) and when it was taken (performance.now()). */
export async function scrape(url: string): Promise<{ samples: Map<string, number>; at: number }> {
  const at = performance.now();
  return { samples: await metrics(url), at };
}

/** AWBs of the orders created so far not generated (nor failed) yet: those not due yet among them. */
const awbsBehind = (samples: Map<string, number>): number =>
  (samples.get('sandbox_orders_created_total') ?? 0) - (samples.get('sandbox_awbs_generated_total') ?? 0) - (samples.get('sandbox_awbs_failed_total') ?? 0);

/**
 * Waits until a sandbox has generated (or failed) the AWB of every order created so far,
 * polling its metrics every `everyMs`, for at most `withinMs`; answers whether it has. A load
 * of creates leaves its last AWBs to run after it: waited for, they are not run while the
 * next server is measured on the same cores, or they are counted in the window they belong to.
 */
export async function awbsCaughtUp(url: string, withinMs = 120_000, everyMs = 100): Promise<boolean> {
  const began = performance.now();
  while (awbsBehind(await metrics(url)) > 0) {
    if (performance.now() - began > withinMs) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return true;
}

/** The AWB jobs' lateness histogram (seconds after their due time, real clock): cumulative counts by upper bound. */
function awbLateness(samples: Map<string, number>): Array<[number, number]> {
  const buckets: Array<[number, number]> = [];
  for (const [name, count] of samples) {
    // prom-client writes `le` first; either order is read.
    const match = /^sandbox_scheduler_lag_seconds_bucket\{(?:le="([^"]+)",kind="awb"|kind="awb",le="([^"]+)")\}$/.exec(name);
    const bound = match?.[1] ?? match?.[2];
    if (bound !== undefined) buckets.push([bound === '+Inf' ? Infinity : Number(bound), count]);
  }
  return buckets.sort((a, b) => a[0] - b[0]);
}

/** The bucket bound under which `share` of the AWB jobs between two scrapes ran (lateness in s; Infinity past the last bound). */
function latenessAt(before: Array<[number, number]>, after: Array<[number, number]>, share: number): number | undefined {
  const counts = after.map(([bound, count], i) => [bound, count - (before[i]?.[1] ?? 0)] as const);
  const total = counts.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  return counts.find(([, count]) => count >= share * total)?.[0];
}

/**
 * How far a sandbox's AWB generation was behind its creates over a load: at its end
 * (`end`: the metrics scraped as it stopped, and when), the AWBs not generated yet (with
 * --awb-delay 1s, the last second's creates are among them, not late); then how many
 * seconds after that scrape until all were (undefined past `withinMs`); and, from the
 * lateness histogram against `since` (scraped before the load), the bounds under which
 * 99% and all of the AWB jobs of the load and its catch-up ran after their due time.
 */
export async function awbBacklog(
  url: string,
  end: { samples: Map<string, number>; at: number },
  since?: Map<string, number>,
  withinMs = 180_000,
): Promise<{ behind: number; caughtUpS: number | undefined; lateP99S: number | undefined; lateMaxS: number | undefined }> {
  const { samples, at: began } = end;
  let now = samples;
  let caughtUpS: number | undefined;
  for (;;) {
    if (awbsBehind(now) <= 0) {
      caughtUpS = Math.round((performance.now() - began) / 100) / 10;
      break;
    }
    if (performance.now() - began > withinMs) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
    now = await metrics(url);
  }
  const before = since ? awbLateness(since) : [];
  const after = awbLateness(now);
  return { behind: awbsBehind(samples), caughtUpS, lateP99S: latenessAt(before, after, 0.99), lateMaxS: latenessAt(before, after, 1) };
}

/**
 * A second partner beside a load: creates one order (`body`) with its own token every
 * `everyMs` until stopped. `stop(settleMs)` waits `settleMs`, then reads that partner's
 * orders back and gives how long after its due time each one's AWB was generated (ms;
 * Infinity: not generated yet). `createMs`: how long each create took, from this process
 * (which may be running a load too, so an upper bound).
 */
export function steadyPartner(url: string, token: string, body: string, everyMs: number): { stop: (settleMs: number) => Promise<number[]>; createMs: number[] } {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  let running = true;
  const createMs: number[] = [];
  const creating = (async () => {
    while (running) {
      const sent = performance.now();
      const res = await fetch(`${url}/v1/order`, { method: 'POST', headers, body });
      if (res.status !== 201) throw new Error(`partner B's create answered ${res.status}`);
      await res.arrayBuffer();
      createMs.push(performance.now() - sent);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    createMs,
    stop: async (settleMs) => {
      running = false;
      await creating;
      await new Promise((resolve) => setTimeout(resolve, settleMs));
      const late: number[] = [];
      let cursor: string | null = null;
      do {
        const page = (await (await fetch(`${url}/__sandbox/orders?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers })).json()) as {
          orders: Array<{ awb_due_at: string; awb_generated_at: string | null }>;
          next_cursor: string | null;
        };
        for (const order of page.orders) late.push(order.awb_generated_at === null ? Infinity : Date.parse(order.awb_generated_at) - Date.parse(order.awb_due_at));
        cursor = page.next_cursor;
      } while (cursor !== null);
      return late;
    },
  };
}
