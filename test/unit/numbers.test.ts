import { describe, expect, it } from 'vitest';
import { permute, permutedText } from '../../src/ids/numbers.js';

describe('permute', () => {
  it('never gives two counters the same number', () => {
    const seen = new Set<bigint>();
    for (let i = 0; i < 20_000; i += 1) seen.add(permute(i, 5, 'seed'));
    expect(seen.size).toBe(20_000);
  });

  it('is the same for the same seed and different for another seed', () => {
    expect(permute(42, 11, 'a')).toBe(permute(42, 11, 'a'));
    expect(permute(42, 11, 'a')).not.toBe(permute(42, 11, 'b'));
  });

  it('writes exactly the number of digits asked for', () => {
    for (let i = 0; i < 100; i += 1) expect(permutedText(i, 10, 's')).toMatch(/^\d{10}$/);
  });
});
