import { describe, expect, it } from 'vitest';
import { defaultLeftOut } from '../../src/app/clients-config.js';
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

describe("a start whose clients leave out the quick start's client default", () => {
  const PARTNER = { id: 'partner', token: 'partner-token-0001' };
  const jobs = (pending: number, orders = pending) =>
    ({ jobs: { count: async (client?: string) => (client === 'default' ? pending : 99) }, orders: { count: async (client?: string) => (client === 'default' ? orders : 99) } }) as unknown as Pick<Storage, 'jobs' | 'orders'>;

  it('says at the start how many of its scheduled jobs will be dropped, with its token masked', async () => {
    const warning = await defaultLeftOut(jobs(3), 'sbx_0123456789abcdef01234567', [{ id: 'client_1a2b3c4d5e6f', token: 'example-token-0001' }]);
    expect(warning).toMatch(/^client "default" \(the token this store generated, sbx_…567\) is not configured on this start: its 3 scheduled jobs .* will be dropped as they fall due/);
    expect(warning).toContain('{ token: <that token>, id: default }');
    expect(warning).not.toContain('sbx_0123456789abcdef01234567');
    expect(await defaultLeftOut(jobs(1), 'sbx_0123456789abcdef01234567', [PARTNER])).toContain('its 1 scheduled job (AWBs, tracking steps, webhook attempts) will be dropped as it falls due, and no token of this start sees its 1 order.');
  });

  it('says so when its orders are done with (no job left): no token of this start sees them', async () => {
    const warning = await defaultLeftOut(jobs(0, 2), 'sbx_0123456789abcdef01234567', [PARTNER]);
    expect(warning).toMatch(/^client "default" \(the token this store generated, sbx_…567\) is not configured on this start: no token of this start sees its 2 orders\. To keep it/);
  });

  it('says nothing when default is configured, its token is (under another id, or none), it has no job and no order, or the store never generated a token', async () => {
    const generated = 'sbx_0123456789abcdef01234567';
    expect(await defaultLeftOut(jobs(3), generated, [{ id: 'default', token: 'another-token-0001' }, PARTNER])).toBeUndefined();
    expect(await defaultLeftOut(jobs(3), generated, [{ id: 'shop', token: generated }, PARTNER])).toBeUndefined();
    expect(await defaultLeftOut(jobs(0), generated, [PARTNER])).toBeUndefined();
    expect(await defaultLeftOut(jobs(3), undefined, [PARTNER])).toBeUndefined();
    expect(await defaultLeftOut(jobs(3), '', [PARTNER])).toBeUndefined();
  });
});
