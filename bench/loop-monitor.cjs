// Preloaded into the sandbox by npm run bench (node --require): measures event-loop delay
// with monitorEventLoopDelay and, on SIGUSR2, writes the figures since the last signal to
// $BENCH_LOOP_FILE and starts again. Not part of the product.
//
// It also counts stalls: gaps of more than 50 ms between runs of a 10 ms timer, and for
// each how long the main thread was on a CPU meanwhile (Linux: /proc/thread-self/schedstat,
// one small read per tick). On a machine shared with other work a long gap may be mostly
// time spent waiting for a CPU; `cpuStalls` counts the gaps the sandbox's own work filled
// (at least 50 ms on a CPU), `maxCpuStall` is the longest such time. Each stall line also
// gives the time the thread waited in the run queue (runnable, no CPU free).
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { readFileSync, writeFileSync } = require('node:fs');

const file = process.env.BENCH_LOOP_FILE;
// BENCH_STALL_LINES=1 (npm run bench:stalls): each stall also as a line on stderr, its end
// in ms since the process started, the gap, and the main thread's CPU time in it.
const lines = process.env.BENCH_STALL_LINES === '1';
// With it, each major GC's pause too, on the same clock, so the stalls can be set against
// `--trace-gc`'s lines (whose clock starts with V8's isolate, some 60-90 ms later).
if (lines) {
  const { PerformanceObserver, constants } = require('node:perf_hooks');
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) process.stderr.write(`[gc] end=${Math.round(entry.startTime + entry.duration)}\n`);
    }
  }).observe({ entryTypes: ['gc'] });
}
const STALL_MS = 50;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  /**
   * Milliseconds the main thread has spent on a CPU and waiting for one (runnable, in the
   * run queue), or undefined where the kernel does not say.
   */
  const schedMs = () => {
    try {
      const [ran, waited] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
      return { ran: Number(ran) / 1e6, waited: Number(waited) / 1e6 };
    } catch {
      return undefined;
    }
  };
  let stalls = 0;
  let cpuStalls = 0;
  let maxCpuStall = 0;
  let lastTick = performance.now();
  let lastSched = schedMs();
  setInterval(() => {
    const now = performance.now();
    const sched = schedMs();
    if (now - lastTick > STALL_MS) {
      stalls += 1;
      const ran = sched !== undefined && lastSched !== undefined ? sched.ran - lastSched.ran : undefined;
      const waited = sched !== undefined && lastSched !== undefined ? sched.waited - lastSched.waited : undefined;
      if (ran !== undefined) {
        if (ran >= STALL_MS) cpuStalls += 1;
        maxCpuStall = Math.max(maxCpuStall, ran);
      }
      const round = (ms) => (ms === undefined ? '' : Math.round(ms));
      if (lines) process.stderr.write(`[stall] end=${Math.round(now)} gap=${Math.round(now - lastTick)} cpu=${round(ran)} waited=${round(waited)}\n`);
    }
    lastTick = now;
    lastSched = sched;
  }, 10).unref();
  process.on('SIGUSR2', () => {
    const ms = (ns) => Math.round((ns / 1e6) * 10) / 10;
    writeFileSync(
      file,
      JSON.stringify({ p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), p999: ms(histogram.percentile(99.9)), max: ms(histogram.max), stalls, cpuStalls, maxCpuStall: Math.round(maxCpuStall) }),
    );
    histogram.reset();
    stalls = 0;
    cpuStalls = 0;
    maxCpuStall = 0;
  });
}
