import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { timeout } from '../../src/client/flags.js';

describe('--timeout <duration> of the client commands', () => {
  it.each([
    ['200ms', 200],
    ['30s', 30_000],
    ['0.5s', 500],
    ['2m', 120_000],
    ['1m30s', 90_000],
    [' 10s ', 10_000],
    ['24h', 86_400_000],
  ])('reads %j as %d ms', (value, ms) => {
    expect(timeout(value)).toBe(ms);
  });

  it.each([['0'], ['0s'], ['-1'], ['-5s'], ['abc'], [''], ['10 s'], ['24h1ms'], ['30'], ['2.5']])('refuses %j, as commander shows it naming the flag', (value) => {
    expect(() => timeout(value)).toThrow(InvalidArgumentError);
  });
});
