import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// The large-body worker (http/large-bodies.ts) must not keep a process that embeds the sandbox alive.
describe('an embedding process', () => {
  it('ends once its sandbox is closed, after the worker checked a large body', () => {
    const script = join(mkdtempSync(join(tmpdir(), 'large-bodies-')), 'embed.mts');
    const sandboxModule = pathToFileURL(resolve('src/index.ts')).href;
    writeFileSync(script, `
      import { createSandbox } from ${JSON.stringify(sandboxModule)};
      const sandbox = await createSandbox({ port: 0, data: ':memory:', tokens: ['embed-token'], logLevel: 'silent' });
      const body = JSON.stringify({ items: Array.from({ length: 20000 }, () => ({})) });
      const res = await fetch(sandbox.url + '/v1/order', { method: 'POST', headers: { authorization: 'Bearer embed-token', 'content-type': 'application/json' }, body });
      console.log('status', res.status);
      await sandbox.close();
    `);
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stdout).toContain('status 400');
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
  }, 90_000);
});
