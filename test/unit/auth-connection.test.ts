import { describe, expect, it, vi } from 'vitest';
import { ClientRegistry } from '../../src/clients/index.js';
import type { IncomingMessage } from 'node:http';
import { authenticateOn, sandboxHeaders } from '../../src/http/auth.js';
import { ApiError } from '../../src/http/errors.js';

const registry = () => new ClientRegistry([{ token: 'token-a', id: 'a' }, { token: 'token-b', id: 'b' }, { token: 'token-a2', id: 'a2', role: 'read_only' }], ['admin-token']);

const statusOf = (fn: () => unknown): number | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof ApiError ? error.status : -1;
  }
};

describe('authentication remembered per keep-alive connection', () => {
  it('takes each request on one connection for the token it sends, whatever the one before sent', () => {
    const clients = registry();
    const connection = {};
    const sequence = ['token-a', 'token-a', 'token-b', 'token-a2', 'admin-token', 'token-a'];
    const seen = sequence.map((token) => {
      const caller = authenticateOn(connection, clients, `Bearer ${token}`);
      return caller.client ? `${caller.client.id}:${caller.role}` : caller.role;
    });
    expect(seen).toEqual(['a:partner', 'a:partner', 'b:partner', 'a2:read_only', 'admin', 'a:partner']);
  });

  it.each([
    ['an unknown token', 'Bearer token-x'],
    ['a token that extends the one before', 'Bearer token-aa'],
    ['a prefix of the one before', 'Bearer token-'],
    ['a Basic scheme', 'Basic dG9rZW4tYTo='],
    ['no header', undefined],
  ])('answers 401 to %s after a known token on the same connection', (_, header) => {
    const clients = registry();
    const connection = {};
    authenticateOn(connection, clients, 'Bearer token-a');
    expect(statusOf(() => authenticateOn(connection, clients, header))).toBe(401);
    // And the connection's next request with the known token is that client again.
    expect(authenticateOn(connection, clients, 'Bearer token-a').client?.id).toBe('a');
  });

  it('looks the token up once per connection while the header stays the same', () => {
    const clients = registry();
    const lookUp = vi.spyOn(clients, 'callerOf');
    const [first, second] = [{}, {}];
    for (let i = 0; i < 5; i += 1) authenticateOn(first, clients, 'Bearer token-a');
    authenticateOn(second, clients, 'Bearer token-a');
    expect(lookUp).toHaveBeenCalledTimes(2);
  });

  it('does not carry a caller from one registry to another (a sandbox built anew)', () => {
    const connection = {};
    authenticateOn(connection, registry(), 'Bearer token-a');
    const other = new ClientRegistry([{ token: 'token-b', id: 'b' }]);
    expect(statusOf(() => authenticateOn(connection, other, 'Bearer token-a'))).toBe(401);
  });
});

describe('sandboxHeaders', () => {
  /** A request as Node parses it: each header byte one character (Latin-1). */
  const request = (name: string, utf8: string) => {
    const value = Buffer.from(utf8, 'utf8').toString('latin1');
    return { rawHeaders: [name, value], headers: { [name.toLowerCase()]: value } } as unknown as IncomingMessage;
  };

  it('reads the sandbox headers as the UTF-8 the client wrote, once: a second read leaves `Ã©` as written', () => {
    const req = request('X-Sandbox-Scenario', 'Ã©');
    expect(sandboxHeaders(req)['x-sandbox-scenario']).toBe('Ã©');
    expect(sandboxHeaders(req)['x-sandbox-scenario']).toBe('Ã©');
  });

  it('reads a one-valued header given twice the same once too: a second read keeps `Müller`', () => {
    const value = Buffer.from('Müller', 'utf8').toString('latin1');
    const req = { rawHeaders: ['X-Sandbox-Client', value, 'X-Sandbox-Client', value], headers: { 'x-sandbox-client': `${value}, ${value}` } } as unknown as IncomingMessage;
    expect(sandboxHeaders(req)['x-sandbox-client']).toBe('Müller');
    expect(sandboxHeaders(req)['x-sandbox-client']).toBe('Müller');
  });

  it('reads every other header as the UTF-8 the client wrote, but leaves a credential as Node read it (a token is compared byte for byte)', () => {
    expect(sandboxHeaders(request('X-Trace', 'é'))['x-trace']).toBe('é');
    expect(sandboxHeaders(request('Authorization', 'Bearer é'))['authorization']).toBe('Bearer Ã©');
    expect(sandboxHeaders(request('Proxy-Authorization', 'Basic é'))['proxy-authorization']).toBe('Basic Ã©');
  });
});
