import type { StartedTestContainer } from 'testcontainers';
import { describe, expect, it } from 'vitest';
import { ShippingSandboxContainer, StartedShippingSandboxContainer } from '../../src/client/testcontainers.js';

/** The variables and files the module gives the container (testcontainers keeps them until start). */
const setUp = (container: ShippingSandboxContainer) => container as unknown as { environment: Record<string, string>; filesToCopy: Array<{ source: string; target: string }> };

describe('ShippingSandboxContainer options (no container started)', () => {
  it('makes one client of a random token when given none, and a client of each token given', () => {
    expect(setUp(new ShippingSandboxContainer('img')).environment.SANDBOX_TOKENS).toMatch(/^tc-[0-9a-f]{24}$/);
    expect(setUp(new ShippingSandboxContainer('img', { tokens: ['a', 'b'] })).environment).toMatchObject({ SANDBOX_TOKENS: 'a,b', SANDBOX_CLOCK: 'manual', SANDBOX_DATA: ':memory:' });
  });

  it('with a clients file, leaves the clients to it: no token of its own, and the tokens given only for the helpers', async () => {
    const withFile = setUp(new ShippingSandboxContainer('img', { configFile: '/tmp/partners/clients.yaml', tokens: ['partner-a-secret'] }));
    expect(withFile.environment.SANDBOX_CONFIG).toBe('/app/config/clients.yaml');
    expect(withFile.environment.SANDBOX_TOKENS).toBeUndefined();
    expect(withFile.filesToCopy).toMatchObject([{ source: '/tmp/partners/clients.yaml', target: '/app/config/clients.yaml' }]);
    expect(setUp(new ShippingSandboxContainer('img', { configFile: '/tmp/clients.yaml' })).environment.SANDBOX_TOKENS).toBeUndefined();
  });

  it('started with a clients file and no token, its helpers say which token to give rather than call as nobody', () => {
    const started = new StartedShippingSandboxContainer({} as StartedTestContainer, []);
    expect(() => started.getToken()).toThrow(/pass their tokens as `tokens`/);
    expect(new StartedShippingSandboxContainer({} as StartedTestContainer, ['partner-a-secret']).getToken()).toBe('partner-a-secret');
  });
});
