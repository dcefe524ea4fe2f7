import { describe, expect, it } from 'vitest';
import { ClientRegistry, clientIdOf } from '../../src/config/clients.js';

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
    expect(() => new ClientRegistry([{ token: 'a' }, { token: 'a' }])).toThrow(/twice/);
    expect(() => new ClientRegistry([{ token: '' }])).toThrow(/non-empty/);
  });

  it('refuses two clients with one id, which would share their records', () => {
    expect(() => new ClientRegistry([{ token: 'a', id: 'p' }, { token: 'b', id: 'p' }])).toThrow(/"p" is configured twice/);
    expect(() => new ClientRegistry([{ token: 'a' }, { token: 'b', id: clientIdOf('a') }])).toThrow(/configured twice/);
  });
});
