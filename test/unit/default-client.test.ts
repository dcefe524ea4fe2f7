import { describe, expect, it } from 'vitest';
import { defaultClient } from '../../src/app/sandbox.js';
import type { ResolvedOptions } from '../../src/config/index.js';
import type { Storage } from '../../src/store/index.js';

/** A store's meta as two replicas starting together on a fresh database see it: neither finds a token, the other keeps its own first. */
function racedMeta(keptByTheOther: string) {
  const kept = new Map<string, unknown>();
  return {
    kept,
    storage: {
      meta: {
        get: async () => undefined,
        setIfAbsent: async (key: string) => {
          if (!kept.has(key)) kept.set(key, keptByTheOther);
          return kept.get(key);
        },
        set: async (key: string, value: unknown) => void kept.set(key, value),
      },
    } as unknown as Storage,
  };
}

describe('the default client of a sandbox started without a token', () => {
  it("takes the token another replica kept first, not one of its own, so that every replica answers the same token", async () => {
    const { storage, kept } = racedMeta('sbx_kept_by_the_other');
    const client = await defaultClient({} as ResolvedOptions, storage);
    expect(client).toEqual({ token: 'sbx_kept_by_the_other', id: 'default', name: 'default' });
    expect(kept.get('default_token')).toBe('sbx_kept_by_the_other');
  });

  it('replaces an empty kept token (a hand-edited data file) with one of its own', async () => {
    const { storage, kept } = racedMeta('');
    const client = await defaultClient({ seed: 'fixed' } as ResolvedOptions, storage);
    expect(client.token).toMatch(/^sbx_[0-9a-f]{8}$/);
    expect(kept.get('default_token')).toBe(client.token);
  });
});
