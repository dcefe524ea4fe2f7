import { describe, expect, it } from 'vitest';
import { isCalendarDay } from '../../src/shared/calendar.js';

describe('isCalendarDay', () => {
  it.each([
    [2026, 5, 1],
    [2026, 1, 31],
    [2028, 2, 29],
    [2000, 2, 29],
    [2026, 12, 31],
    [9999, 12, 31],
    [50, 1, 1],
    [0, 2, 29],
  ])('takes %i-%i-%i', (year, month, day) => expect(isCalendarDay(year, month, day)).toBe(true));

  it.each([
    [2026, 2, 30],
    [2026, 2, 29],
    [1900, 2, 29],
    [2026, 4, 31],
    [2026, 13, 1],
    [2026, 0, 10],
    [2026, 5, 0],
    [2026, 5, 32],
  ])('refuses %i-%i-%i, which Date.UTC would roll over into another day', (year, month, day) => expect(isCalendarDay(year, month, day)).toBe(false));
});
