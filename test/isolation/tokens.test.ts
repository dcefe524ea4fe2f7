import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

vi.mock('node:crypto', async (original) => {
  const actual = await original<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});
const { ClientRegistry } = await import('../../src/clients/registry.js');

const registry = new ClientRegistry([{ token: 'token-a' }, { token: 'token-b-is-longer' }, { token: 'c' }]);
const compare = vi.mocked(crypto.timingSafeEqual);

describe('ClientRegistry.byToken', () => {
  it.each([
    ['a shorter token', 't'],
    ['a longer token', 'token-a-and-more'],
    ['a 10,000-character token', 'x'.repeat(10_000)],
    ['a unicode token', 'tökén-🚚'],
    ['an empty token', ''],
    ['a prefix of a real token', 'token-'],
  ])('rejects %s without throwing', (_, token) => {
    expect(() => registry.byToken(token)).not.toThrow();
    expect(registry.byToken(token)).toBeUndefined();
  });

  it('compares SHA-256 digests with timingSafeEqual, against every client, whatever the length or the match', () => {
    for (const token of ['token-a', 'c', 'unknown', 'x'.repeat(5_000)]) {
      compare.mockClear();
      registry.byToken(token);
      // The same work for a hit, a miss, a short and a long token: one 32-byte comparison per configured client.
      expect(compare).toHaveBeenCalledTimes(3);
      for (const [a, b] of compare.mock.calls) {
        expect((a as Buffer).length).toBe(32);
        expect((b as Buffer).length).toBe(32);
      }
    }
    console.log('[security:tokens] 4 tokens looked up, 12 constant-time digest comparisons, 0 early exits');
  });

  it('finds the client of a known token', () => {
    expect(registry.byToken('token-b-is-longer')?.id).toMatch(/^client_/);
  });
});
