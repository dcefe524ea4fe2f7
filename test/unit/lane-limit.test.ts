import { describe, expect, it } from 'vitest';
import { PermitTimeout } from '../../src/store/postgres/fair-gate.js';
import { LaneLimit } from '../../src/store/postgres/lane-limit.js';

/** A run that goes on until `end` or `fail` is called. */
function opened(): { promise: Promise<void>; end: () => void; fail: (error: Error) => void } {
  let end!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    end = resolve;
    fail = reject;
  });
  return { promise, end, fail };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('LaneLimit', () => {
  it('runs at most perLane of one lane at once, the rest first come first, while other lanes go on', async () => {
    const limit = new LaneLimit(2);
    const started: string[] = [];
    const runs = new Map<string, ReturnType<typeof opened>>();
    const start = (name: string) =>
      limit.run(name[0]!, () => {
        started.push(name);
        const run = opened();
        runs.set(name, run);
        return run.promise;
      });
    const all = ['a1', 'a2', 'a3', 'a4', 'b1', 'b2'].map((name) => start(name).then(() => 'ended', () => 'failed'));
    await turn();
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(limit.runningIn('a')).toBe(2);

    runs.get('a2')!.end();
    await turn();
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2', 'a3']);
    runs.get('a1')!.fail(new Error('the database went away'));
    await turn();
    expect(started.at(-1)).toBe('a4');

    for (const name of ['a3', 'a4', 'b1', 'b2']) runs.get(name)!.end();
    expect(await Promise.all(all)).toEqual(['failed', 'ended', 'ended', 'ended', 'ended', 'ended']);
    expect([limit.runningIn('a'), limit.runningIn('b')]).toEqual([0, 0]);
  });

  it('gives up a wait after waitMs with a PermitTimeout, holding nothing: the lane goes on with the next', async () => {
    const limit = new LaneLimit(1);
    const first = opened();
    const running = limit.run('a', () => first.promise);
    const gaveUp = limit.run('a', async () => 'never', 20).catch((error: unknown) => error);
    const next = limit.run('a', async () => 'next');
    expect(await gaveUp).toBeInstanceOf(PermitTimeout);
    first.end();
    await running;
    expect(await next).toBe('next');
    expect(limit.runningIn('a')).toBe(0);
  });

  it('answers with what the run answers, and refuses a limit that is not a positive whole number', async () => {
    expect(await new LaneLimit(1).run('a', async () => 42)).toBe(42);
    expect(() => new LaneLimit(0)).toThrow(RangeError);
  });
});
