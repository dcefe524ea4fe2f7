import { describe, expect, it } from 'vitest';
import { remembered } from '../../src/shared/index.js';

describe('remembered reads', () => {
  it('shares one read among everyone who asks for the same key, while it runs and after', async () => {
    const reads = new Map<string, Promise<number>>();
    let started = 0;
    const read = () => Promise.resolve(++started);
    const [a, b] = await Promise.all([remembered(reads, 'x', read), remembered(reads, 'x', read)]);
    expect([a, b, await remembered(reads, 'x', read)]).toEqual([1, 1, 1]);
    expect(await remembered(reads, 'y', read)).toBe(2);
  });

  it('reads again after a read failed, and whoever awaited the failure saw it', async () => {
    const reads = new Map<string, Promise<string>>();
    let calls = 0;
    const read = () => (++calls === 1 ? Promise.reject(new Error('connection lost')) : Promise.resolve('fresh'));
    await expect(remembered(reads, 'k', read)).rejects.toThrow('connection lost');
    expect(reads.has('k')).toBe(false);
    expect(await remembered(reads, 'k', read)).toBe('fresh');
    expect(calls).toBe(2);
  });

  it('drops a failed read nobody awaited without an unhandled rejection', async () => {
    const reads = new Map<string, Promise<string>>();
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      void remembered(reads, 'k', () => Promise.reject(new Error('gone')));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(reads.has('k')).toBe(false);
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(unhandled).toEqual([]);
  });

  it('keeps what replaced a read that later failed (a unit that wrote the record meanwhile)', async () => {
    const reads = new Map<string, Promise<string>>();
    let fail!: (error: Error) => void;
    const pending = remembered(reads, 'k', () => new Promise<string>((_, reject) => (fail = reject)));
    reads.set('k', Promise.resolve('written'));
    fail(new Error('connection lost'));
    await expect(pending).rejects.toThrow('connection lost');
    expect(await remembered(reads, 'k', () => Promise.resolve('read again'))).toBe('written');
  });
});
