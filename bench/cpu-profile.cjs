// Preloaded into the sandbox by npm run bench:profile (node --require): the first SIGUSR2
// starts a CPU profile (node:inspector, in this process), the second stops it and writes
// it to $BENCH_PROFILE_FILE, so start-up is left out. Not part of the product.
const { Session } = require('node:inspector');
const { signalWindow, writeWhole } = require('./signal-window.cjs');

const file = process.env.BENCH_PROFILE_FILE;
if (file) {
  const session = new Session();
  session.connect();
  signalWindow(
    () => session.post('Profiler.enable', () => session.post('Profiler.start')),
    () => session.post('Profiler.stop', (error, result) => writeWhole(file, error ? JSON.stringify({ error: String(error) }) : JSON.stringify(result.profile))),
  );
}
