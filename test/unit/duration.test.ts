import { describe, expect, it } from 'vitest';
import { formatDuration, parseDelayRange, parseDuration } from '../../src/shared/duration.js';

describe('parseDuration', () => {
  it.each([
    ['0', 0], ['250', 250], ['500ms', 500], ['3s', 3_000], ['2m', 120_000], ['1h', 3_600_000], ['1d4h', 100_800_000], ['2h30m', 9_000_000], ['1.5s', 1_500],
  ])('reads %s as %i ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each([[''], ['soon'], ['3x'], ['-1s'], ['s'], ['1 d']])('refuses %j', (text) => expect(parseDuration(text)).toBeUndefined());
});

describe('parseDelayRange', () => {
  it('reads a fixed delay as a range of one value', () => expect(parseDelayRange('3s')).toEqual({ min: 3_000, max: 3_000 }));
  it('reads a range', () => expect(parseDelayRange('2s-10s')).toEqual({ min: 2_000, max: 10_000 }));
  it.each([['10s-2s'], ['1s-2s-3s'], ['a-b']])('refuses %j', (text) => expect(parseDelayRange(text)).toBeUndefined());
});

describe('formatDuration', () => {
  it.each([[0, '0s'], [500, '500ms'], [90_000, '1m30s'], [100_800_000, '1d4h']])('writes %i ms as %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});
