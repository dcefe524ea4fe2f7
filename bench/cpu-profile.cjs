// Preloaded into the sandbox by npm run bench:profile (node --require): the first SIGUSR2
// starts a CPU profile (node:inspector, in this process), the second stops it and writes
// it to $BENCH_PROFILE_FILE, so start-up is left out. Not part of the product.
const { Session } = require('node:inspector');
const { renameSync, writeFileSync } = require('node:fs');

const file = process.env.BENCH_PROFILE_FILE;
if (file) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => session.post('Profiler.start'));
      return;
    }
    session.post('Profiler.stop', (error, result) => {
      running = false;
      // Written aside and renamed, so the reader never sees half a file.
      writeFileSync(`${file}.part`, error ? JSON.stringify({ error: String(error) }) : JSON.stringify(result.profile));
      renameSync(`${file}.part`, file);
    });
  });
}
