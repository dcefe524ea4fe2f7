import { describe, expect, it } from 'vitest';
import { WarningThrottle } from '../../src/shared/warning-throttle.js';

describe('WarningThrottle', () => {
  it('lets one warning a minute through per key, and says how many it held back meanwhile', () => {
    let now = 0;
    const throttle = new WarningThrottle(60_000, () => now);
    expect(throttle.take('a')).toBe(0);
    expect(throttle.take('b')).toBe(0); // another client has its own minute
    now = 30_000;
    expect(throttle.take('a')).toBeUndefined();
    now = 59_999;
    expect(throttle.take('a')).toBeUndefined();
    now = 60_000;
    expect(throttle.take('a')).toBe(2);
    expect(throttle.take('a')).toBeUndefined();
    now = 200_000;
    expect(throttle.take('a')).toBe(1);
    expect(throttle.take('b')).toBe(0);
  });
});
