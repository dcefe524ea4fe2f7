// Preloaded into the sandbox by npm run bench:profile (node --expose-gc --require): on
// SIGUSR2, runs a full GC and writes the V8 heap's used bytes to $BENCH_HEAP_FILE.
// Not part of the product.
const { writeFileSync } = require('node:fs');

const file = process.env.BENCH_HEAP_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    if (typeof global.gc === 'function') global.gc();
    writeFileSync(file, String(process.memoryUsage().heapUsed));
  });
}
