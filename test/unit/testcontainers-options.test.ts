import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenericContainer, type StartedTestContainer } from 'testcontainers';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ShippingSandboxContainer, StartedShippingSandboxContainer, STOP_GRACE_MS, stopGraceMs } from '../../src/client/testcontainers.js';
import { heldServer } from '../support/held-server.js';

/** The variables and files the module gives the container (testcontainers keeps them until start). */
const setUp = (container: ShippingSandboxContainer) => container as unknown as { environment: Record<string, string>; filesToCopy: Array<{ source: string; target: string }>; tokens: string[] };

const dir = mkdtempSync(join(tmpdir(), 'tc-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

describe('ShippingSandboxContainer options (no container started)', () => {
  it('makes one client of a random token when given none, and a client of each token given', () => {
    expect(setUp(new ShippingSandboxContainer('img')).environment.SANDBOX_TOKENS).toMatch(/^tc-[0-9a-f]{24}$/);
    expect(setUp(new ShippingSandboxContainer('img', { tokens: ['a', 'b'] })).environment).toMatchObject({ SANDBOX_TOKENS: 'a,b', SANDBOX_CLOCK: 'manual', SANDBOX_DATA: ':memory:' });
  });

  it("with a clients file, leaves the file's clients to it: a token of theirs is not added again, any other token is a client of its own", () => {
    const clients = file('clients.yaml', 'clients:\n  - token: partner-a-secret\n    id: partner-a\n  - token: ops-admin\n    role: admin\n');
    const theirs = setUp(new ShippingSandboxContainer('img', { configFile: clients, tokens: ['partner-a-secret'] }));
    expect(theirs.environment.SANDBOX_CONFIG).toBe('/app/config/clients.yaml');
    expect(theirs.environment.SANDBOX_TOKENS).toBeUndefined();
    expect(theirs.filesToCopy).toMatchObject([{ source: clients, target: '/app/config/clients.yaml' }]);
    expect(theirs.tokens).toEqual(['partner-a-secret']);
    expect(setUp(new ShippingSandboxContainer('img', { configFile: clients, tokens: ['partner-a-secret', 'tc-extra'] })).environment.SANDBOX_TOKENS).toBe('tc-extra');
    // No token given: the file's clients alone, no random client beside them.
    expect(setUp(new ShippingSandboxContainer('img', { configFile: clients })).environment.SANDBOX_TOKENS).toBeUndefined();
  });

  it('with a clients file of admins only, makes the tokens given (or a random one) clients, as without a file', () => {
    const admins = file('admins.json', JSON.stringify({ clients: [{ token: 'ops-admin', role: 'admin' }] }));
    expect(setUp(new ShippingSandboxContainer('img', { configFile: admins, tokens: ['tc-client'] })).environment.SANDBOX_TOKENS).toBe('tc-client');
    expect(setUp(new ShippingSandboxContainer('img', { configFile: admins })).environment.SANDBOX_TOKENS).toMatch(/^tc-[0-9a-f]{24}$/);
  });

  it('says which clients file it could not read, before any container starts', () => {
    expect(() => new ShippingSandboxContainer('img', { configFile: join(dir, 'missing.yaml') })).toThrow(/configFile .*missing\.yaml could not be read/);
  });

  it('started with clients of a file and no token, its helpers say which token to give rather than call as nobody', () => {
    const started = new StartedShippingSandboxContainer({} as StartedTestContainer, []);
    expect(() => started.getToken()).toThrow(/pass their tokens as `tokens`/);
    expect(new StartedShippingSandboxContainer({} as StartedTestContainer, ['partner-a-secret']).getToken()).toBe('partner-a-secret');
  });

  it("answers request()'s JSON parsed and any other answer (a JUnit report) as its text, instead of throwing", async () => {
    const page = await heldServer((req, res) => {
      if (req.url?.includes('junit')) res.writeHead(200, { 'content-type': 'application/xml; charset=utf-8' }).end('<?xml version="1.0"?><testsuites/>');
      else res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"summary":{}}');
    });
    try {
      const port = Number(new URL(page.url).port);
      const started = new StartedShippingSandboxContainer({ getHost: () => '127.0.0.1', getMappedPort: () => port } as unknown as StartedTestContainer, ['t']);
      expect((await started.request('GET', '/__sandbox/report?format=junit')).body).toBe('<?xml version="1.0"?><testsuites/>');
      expect((await started.request('GET', '/__sandbox/report?format=json')).body).toEqual({ summary: {} });
    } finally {
      await page.close();
    }
  });

  it('stops and restarts with the same grace (Testcontainers restarts with none: SIGKILL), unless the test gives its own', async () => {
    const asked: Array<[string, unknown]> = [];
    const container = { stop: async (o: unknown) => void asked.push(['stop', o]), restart: async (o: unknown) => void asked.push(['restart', o]) };
    const started = new StartedShippingSandboxContainer(container as unknown as StartedTestContainer, ['t']);
    await started.stop();
    await started.restart();
    await started.restart({ timeout: 1_000 });
    expect(asked).toEqual([['stop', { timeout: STOP_GRACE_MS }], ['restart', { timeout: STOP_GRACE_MS }], ['restart', { timeout: 1_000 }]]);
  });

  it.each([
    ['the default webhook timeout (10 s)', {}, 15_000],
    ["a webhook timeout of 30s given in env", { env: { SANDBOX_WEBHOOK_TIMEOUT: '30s' } }, 35_000],
    ['a webhook timeout of 1m30s', { env: { SANDBOX_WEBHOOK_TIMEOUT: '1m30s' } }, 95_000],
  ])('stops and restarts with a grace of the webhook timeout plus 5 s: %s', async (_what, options, grace) => {
    const asked: Array<[string, unknown]> = [];
    const running = { stop: async (o: unknown) => void asked.push(['stop', o]), restart: async (o: unknown) => void asked.push(['restart', o]) };
    const start = vi.spyOn(GenericContainer.prototype, 'start').mockResolvedValue(running as unknown as StartedTestContainer);
    try {
      const started = await new ShippingSandboxContainer('img', options).start();
      await started.stop();
      await started.restart();
      expect(asked).toEqual([['stop', { timeout: grace }], ['restart', { timeout: grace }]]);
    } finally {
      start.mockRestore();
    }
  });

  it('takes the default grace for a webhook timeout that is no duration (the sandbox refuses it at the start anyway)', () => {
    expect(stopGraceMs(undefined)).toBe(STOP_GRACE_MS);
    expect(stopGraceMs('soon')).toBe(STOP_GRACE_MS);
  });
});
