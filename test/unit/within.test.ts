import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { within } from '../../src/shared/index.js';

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(resolve, ms, value));

describe('a bounded wait', () => {
  it("gives the work's value when it comes in time", async () => {
    await expect(within(after(5, 'figures'), 1_000)).resolves.toBe('figures');
  });

  it('gives undefined once the time passes, and the work goes on unwatched', async () => {
    let finished = false;
    const slow = after(200, 'late').then((v) => ((finished = true), v));
    await expect(within(slow, 20)).resolves.toBeUndefined();
    expect(finished).toBe(false);
    await slow;
    expect(finished).toBe(true);
  });

  it('throws a failure that comes in time, and drops one that comes after', async () => {
    await expect(within(Promise.reject(new Error('no database')), 1_000)).rejects.toThrow('no database');
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      await within(after(50, undefined).then(() => Promise.reject(new Error('too late'))), 5);
      await after(100, undefined);
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(unhandled).toEqual([]);
  });

  it('holds the process open until the wait ends, so what follows it runs (a stop that waits on work of nothing but unref\'d timers)', () => {
    const script = "const { within } = await import('./src/shared/within.ts'); await within(new Promise(() => {}), 50); console.log('after the wait');";
    expect(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })).toBe('after the wait\n');
  });
});
