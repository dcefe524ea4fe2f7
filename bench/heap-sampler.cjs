// Preloaded into the sandbox by npm run bench:profile, part 5 (node --require): the first
// SIGUSR2 starts V8's sampling heap profiler (node:inspector, in this process), the second
// stops it and writes the profile to $BENCH_HEAP_SAMPLES_FILE. Objects that either
// collector freed are kept in the profile, so it shows where the bytes a request
// allocates are allocated, not only those still alive. Not part of the product.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { signalWindow, writeWhole } = require('./signal-window.cjs');

const file = process.env.BENCH_HEAP_SAMPLES_FILE;
const interval = Number(process.env.BENCH_HEAP_SAMPLES_INTERVAL ?? 512);
if (file) {
  const session = new Session();
  session.connect();
  signalWindow(
    () =>
      session.post('HeapProfiler.enable', () =>
        session.post('HeapProfiler.startSampling', { samplingInterval: interval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }, () => writeFileSync(`${file}.started`, '')),
      ),
    // The tree alone (each function's bytes): the list of every sample is millions long after a load.
    () => session.post('HeapProfiler.stopSampling', (error, result) => writeWhole(file, error ? JSON.stringify({ error: String(error) }) : JSON.stringify({ head: result.profile.head }))),
  );
}
