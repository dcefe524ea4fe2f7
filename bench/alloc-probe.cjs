// Preloaded into the sandbox by npm run bench:profile (node --require): counts the bytes
// the V8 heap allocates between two SIGUSR2. The first starts a window, the second ends
// it and writes `{ bytes, gcs, majorGcs }` to $BENCH_ALLOC_FILE. Not part of the product.
//
// Neither Node 20 nor 24 keeps a total of the bytes allocated (v8.getHeapStatistics() has
// none), so it is summed from the heap's size at each collection: what was allocated is
// what the heap grew by between the end of one collection and the start of the next
// (nothing is freed between collections), and after the last one up to the window's end.
// v8.GCProfiler gives the heap's used size before and after every collection, young and
// full, from V8's own callbacks. Memory outside the V8 heap (Buffers' bytes) is not counted.
const v8 = require('node:v8');
const { writeFileSync } = require('node:fs');
const { signalWindow, writeWhole } = require('./signal-window.cjs');

const file = process.env.BENCH_ALLOC_FILE;
if (file) {
  let profiler;
  let usedAtStart = 0;
  signalWindow(
    () => {
      profiler = new v8.GCProfiler();
      usedAtStart = v8.getHeapStatistics().used_heap_size;
      profiler.start();
      writeFileSync(`${file}.started`, '');
    },
    () => {
      const usedAtEnd = v8.getHeapStatistics().used_heap_size;
      const { statistics } = profiler.stop();
      let bytes = 0;
      let after = usedAtStart;
      let majorGcs = 0;
      for (const gc of statistics) {
        bytes += gc.beforeGC.heapStatistics.usedHeapSize - after;
        after = gc.afterGC.heapStatistics.usedHeapSize;
        if (gc.gcType === 'MarkSweepCompact') majorGcs += 1;
      }
      bytes += usedAtEnd - after;
      writeWhole(file, JSON.stringify({ bytes, gcs: statistics.length, majorGcs }));
    },
  );
}
