import { describe, expect, it } from 'vitest';
import { ManualClock, RealClock } from '../../src/clock/clock.js';
import { Scheduler } from '../../src/clock/scheduler.js';

function recorder(start = 1_000) {
  const clock = new ManualClock(start);
  const scheduler = new Scheduler(clock);
  const runs: Array<{ key: string; at: number; now: number }> = [];
  scheduler.on('job', (key, at) => void runs.push({ key, at, now: clock.now() }));
  return { clock, scheduler, runs };
}

describe('Scheduler with a manual clock', () => {
  it('runs nothing until advanced, then every due job in time order at its own time', async () => {
    const { scheduler, runs } = recorder();
    scheduler.schedule('job', 'b', 3_000);
    scheduler.schedule('job', 'a', 2_000);
    scheduler.schedule('job', 'c', 9_000);
    expect(runs).toEqual([]);
    await scheduler.advance(5_000);
    expect(runs).toEqual([{ key: 'a', at: 2_000, now: 2_000 }, { key: 'b', at: 3_000, now: 3_000 }]);
    expect(scheduler.pending).toBe(1);
  });

  it('runs a job once at its latest schedule, and not at all once cancelled', async () => {
    const { scheduler, runs } = recorder();
    scheduler.schedule('job', 'a', 2_000);
    scheduler.schedule('job', 'a', 4_000);
    scheduler.schedule('job', 'b', 2_000);
    scheduler.cancel('job', 'b');
    await scheduler.advance(10_000);
    expect(runs.map((r) => `${r.key}@${r.at}`)).toEqual(['a@4000']);
  });

  it('runs jobs that a job schedules within the same advance', async () => {
    const clock = new ManualClock(0);
    const scheduler = new Scheduler(clock);
    const seen: number[] = [];
    scheduler.on('tick', (_, at) => {
      seen.push(at);
      if (at < 3_000) scheduler.schedule('tick', 't', at + 1_000);
    });
    scheduler.schedule('tick', 't', 1_000);
    await scheduler.advance(10_000);
    expect(seen).toEqual([1_000, 2_000, 3_000]);
    expect(clock.now()).toBe(10_000);
  });

  it('keeps running after a job throws, and reports the error', async () => {
    const errors: string[] = [];
    const scheduler = new Scheduler(new ManualClock(0), { onError: (_, kind, key) => errors.push(`${kind}:${key}`) });
    const ran: string[] = [];
    scheduler.on('job', (key) => {
      if (key === 'bad') throw new Error('boom');
      ran.push(key);
    });
    scheduler.schedule('job', 'bad', 10);
    scheduler.schedule('job', 'good', 20);
    await scheduler.advance(100);
    expect(errors).toEqual(['job:bad']);
    expect(ran).toEqual(['good']);
  });

  it('refuses to advance a real clock', () => {
    expect(() => new Scheduler(new RealClock()).advance(1)).toThrow(/manual clock/);
  });
});

describe('Scheduler with a real clock', () => {
  it('runs a due job by itself, sped up by the clock speed', async () => {
    const clock = new RealClock(1_000);
    const scheduler = new Scheduler(clock);
    const done = new Promise<number>((resolve) => scheduler.on('job', (_, at) => resolve(at)));
    const due = clock.now() + 60_000; // one simulated minute: 60 real ms
    scheduler.schedule('job', 'x', due);
    expect(await done).toBe(due);
    await scheduler.stop();
  });
});
