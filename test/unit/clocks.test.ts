import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, RealClock } from '../../src/clock/clock.js';
import { Clocks } from '../../src/clock/clocks.js';

describe('Clocks (manual)', () => {
  it("moves one client's clock and never back; a client never moved stands with the sandbox's", () => {
    const clocks = new Clocks(new ManualClock(1_000), ['a', 'b']);
    clocks.moveTo('a', 5_000);
    clocks.moveTo('a', 2_000);
    expect(clocks.of('a')).toBe(5_000);
    expect(clocks.of('b')).toBe(1_000);
    expect(clocks.leads()).toEqual(new Map([['a', 4_000]]));
    expect(clocks.saved('a')).toEqual({ offset_ms: 0, now_ms: 5_000 });
    expect(clocks.saved('b')).toBeUndefined();
  });

  it('restores a kept clock, or --clock-start when that is later', () => {
    const clocks = new Clocks(new ManualClock(1_000), ['a', 'b']);
    clocks.restore('a', { offset_ms: 0, now_ms: 9_000 }, 3_000);
    clocks.restore('b', { offset_ms: 0, now_ms: 2_000 }, 3_000);
    expect([clocks.of('a'), clocks.of('b')]).toEqual([9_000, 3_000]);
  });
});

describe('Clocks (real)', () => {
  it("runs a client's clock ahead by its jump, with the sandbox's speed", () => {
    const clocks = new Clocks(new RealClock(1), ['a', 'b']);
    clocks.keepAhead('a', 3_600_000);
    const b = clocks.of('b');
    expect(clocks.of('a') - b).toBeGreaterThanOrEqual(3_600_000);
    expect(clocks.of('a') - b).toBeLessThan(3_600_000 + 1_000);
    expect(clocks.saved('a')?.offset_ms).toBe(3_600_000);
  });

  it('never restarts behind the time it was saved at (a faster speed before the restart)', () => {
    const clocks = new Clocks(new RealClock(1), ['a']);
    const saved = Date.now() + 10 * 86_400_000; // ten days ahead of wall time, offset 0
    clocks.restore('a', { offset_ms: 0, now_ms: saved });
    expect(clocks.of('a')).toBeGreaterThanOrEqual(saved);
  });
});

describe('RealClock (a pace kept for several processes)', () => {
  afterEach(() => vi.useRealTimers());

  it('changes speed with a settle: the old pace runs on until it ends, then the new one, with no jump', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const clock = new RealClock(60);
    vi.setSystemTime(1_001_000);
    expect(clock.now()).toBe(1_060_000);
    clock.setSpeed(1, 250);
    expect(clock.speed).toBe(1);
    expect(clock.now()).toBe(1_060_000);
    vi.setSystemTime(1_001_250);
    expect(clock.now()).toBe(1_075_000);
    vi.setSystemTime(1_002_250);
    expect(clock.now()).toBe(1_076_000);
  });

  it('waits the real time to a due time across the settle', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const clock = new RealClock(60);
    clock.setSpeed(1, 250);
    expect(clock.realDelayUntil(1_000_000 + 6_000)).toBe(100);
    expect(clock.realDelayUntil(1_000_000 + 15_000 + 1_000)).toBe(1_250);
    expect(clock.realDelayUntil(999_000)).toBe(0);
  });

  it('reads the same times in a process that loads its kept state', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const clock = new RealClock(60);
    clock.setSpeed(3600, 250);
    const other = new RealClock(1);
    other.load(clock.state());
    for (const wall of [1_000_100, 1_000_250, 1_005_000]) {
      vi.setSystemTime(wall);
      expect(other.now()).toBe(clock.now());
    }
    expect(other.speed).toBe(3600);
  });
});

describe('Clocks.adopt (clocks kept by a shared store)', () => {
  it('moves manual clocks on to the kept times, never back', () => {
    const clocks = new Clocks(new ManualClock(1_000), ['a', 'b']);
    clocks.moveTo('a', 9_000);
    clocks.adopt({ clients: new Map([['a', { offset_ms: 0, now_ms: 5_000 }], ['b', { offset_ms: 0, now_ms: 7_000 }]]), manualMs: 3_000 });
    expect([clocks.of('a'), clocks.of('b'), clocks.now()]).toEqual([9_000, 7_000, 3_000]);
    clocks.adopt({ clients: new Map(), manualMs: 2_000 });
    expect(clocks.now()).toBe(3_000);
  });

  it("takes a real clock's kept offsets (never smaller) and its kept pace", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      const clocks = new Clocks(new RealClock(1), ['a', 'b']);
      clocks.keepAhead('a', 10_000);
      clocks.adopt({
        clients: new Map([['a', { offset_ms: 5_000, now_ms: 0 }], ['b', { offset_ms: 60_000, now_ms: 0 }]]),
        real: { sim_base_ms: 2_000_000, wall_base_ms: 1_000_000, speed: 60, previous_speed: 60, started_speed: 1 },
      });
      expect([clocks.now(), clocks.of('a'), clocks.of('b'), clocks.speed]).toEqual([2_000_000, 2_010_000, 2_060_000, 60]);
    } finally {
      vi.useRealTimers();
    }
  });
});
