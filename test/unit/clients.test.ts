import { describe, expect, it } from 'vitest';
import { ClientRegistry, clientIdOf } from '../../src/clients/registry.js';

describe('ClientRegistry', () => {
  const registry = new ClientRegistry([{ token: 'alpha-token' }, { token: 'beta', id: 'partner-b', name: 'Partner B' }]);

  it('finds a client by its token, with an id derived from the token when none is given', () => {
    expect(registry.byToken('alpha-token')?.id).toBe(clientIdOf('alpha-token'));
    expect(registry.byToken('beta')).toMatchObject({ id: 'partner-b', name: 'Partner B' });
  });

  it.each([[''], ['alpha'], ['alpha-token-longer'], ['ALPHA-TOKEN'], ['x'.repeat(10_000)]])('rejects %j without throwing', (token) => {
    expect(registry.byToken(token)).toBeUndefined();
  });

  it('refuses a token configured twice, and an empty one', () => {
    expect(() => new ClientRegistry([{ token: 'a' }, { token: 'a' }])).toThrow(/twice, both times for a client named by its token alone: .*--token \/ SANDBOX_TOKENS/);
    expect(() => new ClientRegistry([{ token: 'partner-a-secret', id: 'partner-a' }], ['partner-a-secret'])).toThrow(/for client "partner-a" and for an admin token/);
    expect(() => new ClientRegistry([{ token: '' }])).toThrow(/non-empty/);
  });

  it('lets several tokens share one id: they are one client with the same records', () => {
    const shared = new ClientRegistry([{ token: 'full', id: 'p' }, { token: 'reader', id: 'p', read_only: true }]);
    expect(shared.byToken('full')?.id).toBe('p');
    expect(shared.byToken('reader')).toMatchObject({ id: 'p', read_only: true });
  });

  it("gives every token of an id the client's settings, set on any one of them, and refuses two that set one apart", () => {
    const webhook = { url: 'http://partner.test/hook' };
    const shared = new ClientRegistry([{ token: 'full', id: 'p', scenario: 'delivered', webhook }, { token: 'reader', id: 'p', role: 'read_only' }, { token: 'rotated', id: 'p', webhook }]);
    for (const token of ['full', 'reader', 'rotated']) expect(shared.byToken(token)).toMatchObject({ id: 'p', scenario: 'delivered', webhook });
    expect(shared.byToken('reader')?.role).toBe('read_only');
    expect(() => new ClientRegistry([{ token: 'full', id: 'p', awb_delay: '1s' }, { token: 'other', id: 'p', awb_delay: '2s' }])).toThrow(/tokens of client "p" set awb_delay differently/);
    // The same written another way is the same.
    const S = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(() => new ClientRegistry([{ token: 'full', id: 'p', awb_delay: '3s', webhook: { url: 'http://h.test', secret: S } }, { token: 'other', id: 'p', awb_delay: '3000ms', webhook: { secret: S, url: 'http://h.test', chaos: [] } }])).not.toThrow();
  });

  it("refuses settings on a read_only token that its partner token does not have (they used to reach neither the client's orders nor its webhooks)", () => {
    expect(() => new ClientRegistry([{ token: 'full', id: 'p' }, { token: 'reader', id: 'p', role: 'read_only', scenario: 'returned', webhook: { url: 'http://h.test/ro' } }])).toThrow(
      /A read_only token of client "p" sets scenario, which its partner token does not: set it on the partner token/,
    );
    // A webhook left with nothing in it (url "", an empty chaos list) is none.
    expect(() => new ClientRegistry([{ token: 'full', id: 'p' }, { token: 'reader', id: 'p', role: 'read_only', webhook: { url: '', chaos: [] } }])).not.toThrow();
    // With no partner token, a read_only token's settings are the client's.
    expect(new ClientRegistry([{ token: 'reader', id: 'p', role: 'read_only', scenario: 'returned' }]).byToken('reader')?.scenario).toBe('returned');
  });

  it('refuses a token a client could never send (a space, a character above U+00FF), without showing it', () => {
    expect(() => new ClientRegistry([{ token: 'a b', id: 'p' }])).toThrow(/token of client "p" would never authenticate: a token is visible text without spaces/);
    expect(() => new ClientRegistry([{ token: 'tōken' }])).not.toThrow(/tōken/);
    expect(() => new ClientRegistry([{ token: 'tōken' }])).toThrow(/never authenticate/);
    // Latin-1 reaches the sandbox from a client that sends its headers so (node does).
    expect(new ClientRegistry([{ token: 'pässwort', id: 'p' }]).byToken('pässwort')?.id).toBe('p');
  });
});
