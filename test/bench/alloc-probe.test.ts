import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'alloc-probe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A process with bench/alloc-probe.cjs preloaded opens a window, allocates `count` arrays
 * of 1,000 elements (each at least its 8,016-byte backing store), keeping every
 * `keepEvery`-th in a ring so that the old space fills and full collections run too,
 * and closes the window; answers what the probe wrote.
 */
function measure(count: number, keepEvery: number): { bytes: number; gcs: number; majorGcs: number } {
  const file = join(dir, `alloc-${count}-${keepEvery}.json`);
  const script = `
    const { existsSync } = require('node:fs');
    const file = process.env.BENCH_ALLOC_FILE;
    const ring = new Array(5000);
    let last;
    const signal = () => process.kill(process.pid, 'SIGUSR2');
    const until = (path, then) => (existsSync(path) ? then() : setTimeout(() => until(path, then), 5));
    signal();
    until(file + '.started', () => {
      for (let i = 0; i < ${count}; i += 1) {
        const array = new Array(1000);
        array[0] = i;
        last = array;
        if (i % ${keepEvery} === 0) ring[(i / ${keepEvery}) % ring.length] = array;
      }
      signal();
      until(file, () => {});
    });`;
  const run = spawnSync(process.execPath, ['--require', join(ROOT, 'bench', 'alloc-probe.cjs'), '-e', script], { env: { ...process.env, BENCH_ALLOC_FILE: file }, encoding: 'utf8', timeout: 60_000 });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(readFileSync(file, 'utf8'));
}

describe('bench/alloc-probe.cjs, the allocation counter of npm run bench:profile', () => {
  it('counts what a window allocates, through young collections', () => {
    const count = 50_000;
    const { bytes, gcs } = measure(count, 1_000_000);
    expect(gcs).toBeGreaterThan(10);
    expect(bytes).toBeGreaterThanOrEqual(count * 8_016);
    expect(bytes).toBeLessThanOrEqual(count * 8_016 * 1.05);
  });

  it('counts it through full collections too', () => {
    const count = 60_000;
    const { bytes, majorGcs } = measure(count, 2);
    expect(majorGcs).toBeGreaterThan(0);
    expect(bytes).toBeGreaterThanOrEqual(count * 8_016);
    expect(bytes).toBeLessThanOrEqual(count * 8_016 * 1.05);
  });
});

describe('bench/heap-sampler.cjs, the sampling heap profile of npm run bench:profile', () => {
  it('names the function that allocated a window\'s bytes, freed objects included', () => {
    const file = join(dir, 'samples.heapprofile');
    // Each array is dropped at once: only a profile that keeps freed objects sees them.
    const script = `
      const { existsSync } = require('node:fs');
      const file = process.env.BENCH_HEAP_SAMPLES_FILE;
      const signal = () => process.kill(process.pid, 'SIGUSR2');
      const until = (path, then) => (existsSync(path) ? then() : setTimeout(() => until(path, then), 5));
      let last;
      function allocateArrays() {
        for (let i = 0; i < 20000; i += 1) { const array = new Array(1000); array[0] = i; last = array; }
      }
      signal();
      until(file + '.started', () => { allocateArrays(); signal(); until(file, () => {}); });`;
    const run = spawnSync(process.execPath, ['--require', join(ROOT, 'bench', 'heap-sampler.cjs'), '-e', script], { env: { ...process.env, BENCH_HEAP_SAMPLES_FILE: file }, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    interface Node { callFrame: { functionName: string }; selfSize: number; children: Node[] }
    const bytesOf = (node: Node, name: string): number => (node.callFrame.functionName === name ? node.selfSize : 0) + node.children.reduce((sum, child) => sum + bytesOf(child, name), 0);
    const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: Node };
    // 20,000 arrays of at least 8,016 bytes each: about 160 MB, sampled.
    expect(bytesOf(head, 'allocateArrays')).toBeGreaterThan(20_000 * 8_016 * 0.8);
    expect(bytesOf(head, 'allocateArrays')).toBeLessThan(20_000 * 8_016 * 1.2);
  });
});
