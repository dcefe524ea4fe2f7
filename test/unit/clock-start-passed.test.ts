import { describe, expect, it } from 'vitest';
import { Clocks, clockStartPassed, ManualClock } from '../../src/clock/index.js';

const START = Date.parse('2026-01-01T00:00:00Z');
const DAY = 86_400_000;
const options = { clock: 'manual' as const, speed: 1, clockStart: START };

describe('clockStartPassed: what a start says of manual clocks the store kept past --clock-start', () => {
  it("names the sandbox's clock alone when it is the one ahead, not every client that runs with it", () => {
    const clocks = new Clocks(new ManualClock(START + DAY), ['a', 'b', 'c']);
    expect(clockStartPassed(options, clocks)).toEqual({
      message: "the sandbox's manual clock (every client's that never moved apart from it) resumes at 2026-01-02T00:00:00.000Z, where the store kept it: later than --clock-start 2026-01-01T00:00:00.000Z, which moves no clock back (a new data file, or a new database, starts at it; GET /__sandbox/clock shows a client's)",
      clients: [],
      clients_total: 0,
    });
  });

  it('counts the clients whose own clock is ahead, listing the first 20', () => {
    const ids = Array.from({ length: 25 }, (_, i) => `client-${i}`);
    const clocks = new Clocks(new ManualClock(START), [...ids, 'still']);
    for (const id of ids) clocks.moveTo(id, START + DAY);
    const passed = clockStartPassed(options, clocks);
    expect(passed?.message).toMatch(/^the clocks of 25 clients resume, where the store kept them: later than --clock-start 2026-01-01T00:00:00.000Z/);
    expect(passed?.clients).toEqual(ids.slice(0, 20));
    expect(passed?.clients_total).toBe(25);
  });

  it('says nothing when every clock stands at --clock-start, on a real clock, or without the flag', () => {
    expect(clockStartPassed(options, new Clocks(new ManualClock(START), ['a']))).toBeUndefined();
    expect(clockStartPassed({ ...options, clockStart: undefined }, new Clocks(new ManualClock(START + DAY), ['a']))).toBeUndefined();
    expect(clockStartPassed({ ...options, clock: 'real' }, new Clocks(new ManualClock(START + DAY), ['a']))).toBeUndefined();
  });
});
