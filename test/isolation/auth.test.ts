import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.close());

const BAD_AUTH: Array<[string, Record<string, string>]> = [
  ['no Authorization header', {}],
  ['an unknown token', { Authorization: 'Bearer not-a-configured-token' }],
  ['a token of another length', { Authorization: `Bearer ${'x'.repeat(4_000)}` }],
  ['a Basic scheme', { Authorization: 'Basic dG9rZW4tY2xpZW50LWE6' }],
];

describe('every secured operation is closed to unknown tokens', () => {
  let checked = 0;
  const operations = () => [...sandbox.services.specs.control.operations, ...sandbox.services.specs.provider.operations].filter((o) => o.secured);

  it('has secured control operations (all but health, the specs and POD photos)', () => {
    const open = sandbox.services.specs.control.operations.filter((o) => !o.secured).map((o) => o.operationId);
    expect(open.sort()).toEqual(['getControlSpec', 'getHealth', 'getMetrics', 'getPodPhoto', 'getProviderSpec']);
  });

  it.each(BAD_AUTH)('answers 401 with WWW-Authenticate and the envelope to %s, on every secured operation', async (_, headers) => {
    for (const op of operations()) {
      const path = op.path.replace(/\{[^}]+\}/g, '1');
      const res = await sandbox.call(op.method, path, { token: null, headers, body: op.body === 'none' ? undefined : {} });
      expect(res.status, `${op.operationId} ${op.method.toUpperCase()} ${path}`).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body).toMatchObject({ success: false, errors: [{ field: 'header.authorization' }] });
      checked++;
    }
  });

  it('prints its figures', () => {
    console.log(`[security:auth] ${operations().length} secured operations × ${BAD_AUTH.length} kinds of bad token: ${checked} requests, all 401`);
  });
});
