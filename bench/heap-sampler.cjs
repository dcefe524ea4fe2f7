// Preloaded into the sandbox by npm run bench:profile, part 5 (node --require): the first
// SIGUSR2 starts V8's sampling heap profiler (node:inspector, in this process), the second
// stops it and writes the profile to $BENCH_HEAP_SAMPLES_FILE. Objects that either
// collector freed are kept in the profile, so it shows where the bytes a request
// allocates are allocated, not only those still alive. Not part of the product.
const { Session } = require('node:inspector');
const { renameSync, writeFileSync } = require('node:fs');

const file = process.env.BENCH_HEAP_SAMPLES_FILE;
const interval = Number(process.env.BENCH_HEAP_SAMPLES_INTERVAL ?? 512);
if (file) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('HeapProfiler.enable', () =>
        session.post('HeapProfiler.startSampling', { samplingInterval: interval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }, () => writeFileSync(`${file}.started`, '')),
      );
      return;
    }
    session.post('HeapProfiler.stopSampling', (error, result) => {
      running = false;
      // Written aside and renamed, so the reader never sees half a file.
      // The tree alone (each function's bytes): the list of every sample is millions long after a load.
      writeFileSync(`${file}.part`, error ? JSON.stringify({ error: String(error) }) : JSON.stringify({ head: result.profile.head }));
      renameSync(`${file}.part`, file);
    });
  });
}
