/**
 * npm run bench:stalls : what the event-loop stalls of a sustained load are.
 *
 * The sandbox as users run it (real clock, a data file, --awb-delay 1s, log level info
 * written to a file), under `node --trace-gc`, with bench/loop-monitor.cjs printing each
 * stall (a gap of more than 50 ms between runs of a 10 ms timer) and the main thread's
 * CPU time in it. autocannon sends 10-item creates on 10 connections for
 * BENCH_STALLS_SECONDS (40; after a 2 s warm-up); BENCH_NODE_FLAGS adds flags for node.
 * Then it prints every stall of the load with where it falls: during one of V8's
 * mark-compact cycles (from the start of its marking to its end, as `--trace-gc` gives
 * them), within 200 ms after one (sweeping), or elsewhere; the young generation's
 * collections (Scavenge: how many, their pauses); and the cycles: heap after,
 * main-thread marking work, biggest step, pause.
 *
 * Times: the stall logger's are ms since the process started, `--trace-gc`'s since V8's
 * isolate did (60-90 ms later here): the loop monitor also logs each major GC's end on
 * the process's clock, and the median gap to the trace's puts the cycles on that clock.
 * Overlaps are looked for with 20 ms of slack.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createRequest } from '../test/support/orders.js';
import { load, loopDelay, spawnServer, stop, TMP } from './harness.js';
import { BENCH_TOKEN } from './prefill.js';

const SECONDS = Number(process.env.BENCH_STALLS_SECONDS ?? 40);
const SLACK_MS = 20;
/** More flags for node (V8's GC flags, to try them), e.g. BENCH_NODE_FLAGS="--max-semi-space-size=64". */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

interface Stall {
  end: number;
  gap: number;
  /** The main thread's time on a CPU in the gap. */
  cpu: number | undefined;
  /** Its time runnable but waiting for a CPU; the rest of the gap it was blocked (a lock, a futex with V8's helpers, I/O). */
  waited: number | undefined;
}

interface Cycle {
  end: number;
  marking: number;
  heapAfterMb: number;
  pauseMs: number;
  stepsMs: number;
  biggestStepMs: number;
}

function stallsOf(log: string): Stall[] {
  const number = (text: string | undefined) => (text === undefined || text === '' ? undefined : Number(text));
  return [...log.matchAll(/^\[stall\] end=(\d+) gap=(\d+) cpu=(\d*) waited=(\d*)$/gm)].map((m) => ({ end: Number(m[1]), gap: Number(m[2]), cpu: number(m[3]), waited: number(m[4]) }));
}

/**
 * Mark-compact cycles of a `--trace-gc` log, on V8's clock. A cycle marked incrementally
 * says how long since its marking began; one that was not is its pause alone. Throws when
 * a Mark-Compact line does not parse, so no cycle is silently left out.
 */
function cyclesOf(log: string): Cycle[] {
  const lines = log.split('\n').filter((line) => /\d ms: Mark-Compact/.test(line));
  return lines.map((line) => {
    const head = /(\d+) ms: Mark-Compact(?: \([^)]*\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB,(?: pooled: [\d.]+ MB,)? ([\d.]+) \/ [\d.]+ ms/.exec(line);
    if (!head) throw new Error(`A --trace-gc line this script cannot read: ${line}`);
    const marking = /\(\+ ([\d.]+) ms in \d+ steps since start of marking, biggest step ([\d.]+) ms, walltime since start of marking (\d+) ms\)/.exec(line);
    const pauseMs = Number(head[3]);
    return {
      end: Number(head[1]),
      heapAfterMb: Number(head[2]),
      pauseMs,
      stepsMs: marking ? Number(marking[1]) : 0,
      biggestStepMs: marking ? Number(marking[2]) : 0,
      marking: marking ? Number(marking[3]) : Math.ceil(pauseMs),
    };
  });
}

/** Young-generation collections of a `--trace-gc` log: each one's end on V8's clock and its pause. */
function scavengesOf(log: string): Array<{ end: number; pauseMs: number }> {
  return [...log.matchAll(/^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: Scavenge\b.*? MB,(?: pooled: [\d.]+ MB,)? ([\d.]+) \/ [\d.]+ ms/gm)].map((m) => ({ end: Number(m[1]), pauseMs: Number(m[2]) }));
}

/**
 * How far V8's clock is behind the process's: the median gap between each major GC's end
 * as the loop monitor saw it (performance timeline) and as `--trace-gc` logged it.
 */
function clockOffset(log: string, cycles: Cycle[]): number {
  const ends = [...log.matchAll(/^\[gc\] end=(\d+)$/gm)].map((m) => Number(m[1]));
  const gaps = cycles.slice(0, ends.length).map((cycle, i) => ends[i]! - cycle.end).sort((a, b) => a - b);
  return gaps.length > 0 ? gaps[Math.floor(gaps.length / 2)]! : 0;
}

/** After its pause a cycle still sweeps, partly on the main thread as it allocates: a stall this soon after one is counted apart. */
const SWEEPING_MS = 200;

const overlaps = (stall: Stall, cycle: Cycle): boolean => stall.end - stall.gap <= cycle.end + SLACK_MS && stall.end >= cycle.end - cycle.marking - SLACK_MS;
const soonAfter = (stall: Stall, cycle: Cycle): boolean => stall.end - stall.gap > cycle.end && stall.end - stall.gap <= cycle.end + SWEEPING_MS;

/** Where a stall falls: during a cycle's marking, soon after a cycle, or elsewhere. */
function placeOf(stall: Stall, cycles: Cycle[]): 'marking' | 'after' | 'elsewhere' {
  if (cycles.some((c) => overlaps(stall, c))) return 'marking';
  return cycles.some((c) => soonAfter(stall, c)) ? 'after' : 'elsewhere';
}

async function main(): Promise<void> {
  const dir = join(TMP, 'stalls');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const log = join(dir, 'sandbox.log');
  const loopFile = join(dir, 'loop.json');
  const server = await spawnServer('sandbox', process.execPath, ['--trace-gc', ...NODE_FLAGS, '--require', './bench/loop-monitor.cjs', 'dist/cli.js', '--port', '0', '--data', join(dir, 'sandbox.json'), '--token', BENCH_TOKEN, '--awb-delay', '1s'], {
    env: { NODE_ENV: 'production', BENCH_LOOP_FILE: loopFile, BENCH_STALL_LINES: '1' },
    log,
  });
  // The sandbox's times count from its start, about when it was spawned.
  const spawnedAt = performance.now() - server.startupMs;
  await loopDelay(server.child, loopFile); // the loop's figures from here on: start-up left out
  const began = performance.now();
  const figures = await load(`${server.url}/v1/order`, 'POST', JSON.stringify(createRequest(10)), SECONDS);
  const loadMs = performance.now() - began;
  const loop = await loopDelay(server.child, loopFile);
  await stop(server.child);
  const text = readFileSync(log, 'utf8');
  rmSync(dir, { recursive: true, force: true });

  // The load (its warm-up included) in the sandbox's own times.
  const from = began - spawnedAt;
  const to = from + loadMs;
  const stalls = stallsOf(text);
  const traced = cyclesOf(text);
  const offset = clockOffset(text, traced);
  // On the process's clock, and only those of the load.
  const cycles = traced.map((c) => ({ ...c, end: c.end + offset })).filter((c) => c.end >= from && c.end - c.marking <= to);
  const during = stalls.filter((s) => s.end - s.gap >= from && s.end <= to);
  console.log(`npm run bench:stalls: ${SECONDS} s of 10-item creates, 10 connections: ${figures.rps} requests a second (${figures.rps * 10} orders), p99 ${figures.p99} ms; event-loop delay p99.9 ${loop.p999} ms, max ${loop.max} ms.\n`);
  console.log('| stall ends at ms | gap ms | main thread on a CPU ms | waiting for a CPU ms | blocked or idle ms (the 10 ms timer among it) | where |');
  console.log('|---|---|---|---|---|---|');
  const places = during.map((stall) => placeOf(stall, cycles));
  const label = { marking: 'during a mark-compact cycle', after: `within ${SWEEPING_MS} ms after one`, elsewhere: 'elsewhere' };
  const blocked = (stall: Stall) => (stall.cpu === undefined || stall.waited === undefined ? '?' : Math.max(0, stall.gap - stall.cpu - stall.waited));
  during.forEach((stall, i) => console.log(`| ${stall.end} | ${stall.gap} | ${stall.cpu ?? '?'} | ${stall.waited ?? '?'} | ${blocked(stall)} | ${label[places[i]!]} |`));
  const count = (place: keyof typeof label) => places.filter((p) => p === place).length;
  const onCpu = during.filter((s) => (s.cpu ?? 0) >= 50).length;
  // By chance alone, a stall would fall in the cycles' windows this share of the time.
  const covered = cycles.reduce((sum, c) => sum + c.marking + SLACK_MS * 2, 0) / (to - from);
  const coveredAfter = (cycles.length * SWEEPING_MS) / (to - from);
  console.log(
    `\n${during.length} stalls over 50 ms during the load (${Math.round(from)}-${Math.round(to)} ms): ${count('marking')} during a mark-compact cycle, ${count('after')} within ${SWEEPING_MS} ms after one, ${count('elsewhere')} elsewhere; ${onCpu} with 50 ms or more of the main thread on a CPU. The cycles' marking windows cover ${(covered * 100).toFixed(1)}% of the load's time and the ${SWEEPING_MS} ms after them ${(coveredAfter * 100).toFixed(1)}% (V8's clock ${offset} ms behind the process's).\n`,
  );
  // The young generation's collections pause the loop too: each one copies what survived since the last.
  const scavenges = scavengesOf(text).filter((c) => c.end + offset >= from && c.end + offset <= to).map((c) => c.pauseMs).sort((a, b) => a - b);
  if (scavenges.length > 0) {
    const total = scavenges.reduce((sum, ms) => sum + ms, 0);
    const at = (q: number) => scavenges[Math.min(scavenges.length - 1, Math.floor(q * scavenges.length))]!;
    console.log(
      `${scavenges.length} young-generation collections (Scavenge) during the load, pausing the loop ${Math.round(total)} ms in all (${((100 * total) / (to - from)).toFixed(1)}% of its time): median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${scavenges.at(-1)} ms.\n`,
    );
  }
  console.log('| mark-compact ends at ms | heap after MB | marking walltime ms | main-thread marking steps ms | biggest step ms | pause ms |');
  console.log('|---|---|---|---|---|---|');
  for (const c of cycles) console.log(`| ${c.end} | ${c.heapAfterMb} | ${c.marking} | ${c.stepsMs} | ${c.biggestStepMs} | ${c.pauseMs} |`);
}

await main();
process.exit(0);
