import { describe, expect, it } from 'vitest';
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
