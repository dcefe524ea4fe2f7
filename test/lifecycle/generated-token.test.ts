import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedTokenGiven } from '../../src/app/clients-config.js';
import { testSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

// The quick start prints a generated token; a user who then starts the sandbox with
// `--token <that token> --token example-token` (as the example client once advised) loses
// sight of every order made so far: the token now names a client of its own.
describe("a data file's generated token given back with --token", () => {
  const dir = tempDir();

  it("is named at start as client default's token, with how to keep it default; a clients file entry with id default is not", async () => {
    const data = join(dir(), 'sandbox.json');
    const first = await testSandbox({ data, clients: [] });
    const generated = first.services.registry.clients[0]!.token;
    await first.close();

    const byFlag = await testSandbox({ data, clients: [], tokens: [generated, 'example-token-0001'] });
    try {
      const warning = await generatedTokenGiven(byFlag.services.storage, byFlag.services.registry.clients);
      const renamed = byFlag.services.registry.clients.find((c) => c.token === generated)!.id;
      expect(renamed).not.toBe('default');
      expect(warning).toContain(`configured for client "${renamed}"`);
      expect(warning).toContain('{ token: <that token>, id: default }');
      // No log line carries a token.
      expect(warning).not.toContain(generated);
    } finally {
      await byFlag.close();
    }

    const byFile = await testSandbox({ data, clients: [{ token: generated, id: 'default' }, { token: 'example-token-0001' }] });
    try {
      expect(await generatedTokenGiven(byFile.services.storage, byFile.services.registry.clients)).toBeUndefined();
    } finally {
      await byFile.close();
    }
  });
});
