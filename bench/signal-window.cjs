// What the preloaded probes of npm run bench:profile share (bench/cpu-profile.cjs,
// bench/heap-sampler.cjs, bench/alloc-probe.cjs): the first SIGUSR2 opens a window, the
// second closes it, so start-up and warm-up are left out; the result is written aside and
// renamed, so the reader never sees half a file. Not part of the product.
const { renameSync, writeFileSync } = require('node:fs');

/** Writes `text` to `file` whole: aside first, then renamed over it. */
function writeWhole(file, text) {
  writeFileSync(`${file}.part`, text);
  renameSync(`${file}.part`, file);
}

/** Runs `open()` at every odd SIGUSR2 and `close()` at every even one. */
function signalWindow(open, close) {
  let opened = false;
  process.on('SIGUSR2', () => {
    opened = !opened;
    if (opened) open();
    else close();
  });
}

module.exports = { signalWindow, writeWhole };
