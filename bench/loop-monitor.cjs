// Preloaded into the sandbox by npm run bench (node --require): measures event-loop delay
// with monitorEventLoopDelay and, on SIGUSR2, writes the figures since the last signal to
// $BENCH_LOOP_FILE and starts again. Not part of the product.
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { writeFileSync } = require('node:fs');

const file = process.env.BENCH_LOOP_FILE;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  process.on('SIGUSR2', () => {
    const ms = (ns) => Math.round((ns / 1e6) * 10) / 10;
    writeFileSync(file, JSON.stringify({ p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), p999: ms(histogram.percentile(99.9)), max: ms(histogram.max) }));
    histogram.reset();
  });
}
