// The health probe of npm run bench, in a process of its own: GET /__sandbox/health every
// 50 ms, each wait timed here. Run beside autocannon in the bench's own process, a wait
// also counted the turns that process's event loop spent on autocannon's responses, not
// only the sandbox's. Usage: node bench/probe.cjs <url>; on SIGTERM it writes the waits
// (ms, a JSON array) to stdout and exits. A probe with no answer within 30 s counts 30 s.
const url = `${process.argv[2]}/__sandbox/health`;
const waits = [];
let running = true;
const loop = (async () => {
  while (running) {
    const started = performance.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      waits.push(performance.now() - started);
    } catch {
      waits.push(30_000);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
})();
process.once('SIGTERM', () => {
  running = false;
  void loop.then(() => {
    process.stdout.write(JSON.stringify(waits));
    process.exit(0);
  });
});
process.stdout.write('probing\n');
