import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';

// Five starts of the real CLI: in `npm run test:load` (SLOW in vitest.config.ts).
describe('the banner of a CLI started with --webhook-targets', () => {
  it('shows a policy that restricts anything (a misspelt public reads as a one-host allow list), and none under any', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'targets-banner-'));
    try {
      const misspelt = await startCli(['--port', '0', '--data', join(dir, 'a.json'), '--webhook-targets', 'pubic']);
      await misspelt.stop('SIGKILL');
      expect(misspelt.output()).toContain('  webhook targets: pubic  (URLs set through the API may point nowhere else; --webhook-targets)');
      const open = await startCli(['--port', '0', '--data', join(dir, 'b.json')]);
      await open.stop('SIGKILL');
      expect(open.output()).toContain('listening on');
      expect(open.output()).not.toContain('webhook targets:');
      expect(open.output()).not.toContain('may point anywhere'); // one client: a laptop
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('warns at start when several partners share a sandbox whose webhook URLs may point anywhere, and not once a policy is set', async () => {
    const warning = (output: string) => output.split('\n').filter((line) => line.includes('may point anywhere')).map((line) => JSON.parse(line) as { level: number; msg: string; clients: number });
    const shared = await startCli(['--port', '0', '--data', ':memory:', '--token', 'acme-token,bolt-token']);
    expect(await shared.stop('SIGTERM')).toBe(0); // a graceful stop: the log lines are written out
    expect(warning(shared.output())).toEqual([
      expect.objectContaining({ level: 40, clients: 2, msg: expect.stringContaining('this sandbox serves 2 clients, and webhook URLs set through the API may point anywhere (--webhook-targets any') }),
    ]);
    expect(warning(shared.output())[0]!.msg).toContain('For a shared deployment set --webhook-targets public');
    const operated = await startCli(['--port', '0', '--data', ':memory:', '--token', 'acme-token', '--admin-token', 'ops-token-1234']);
    expect(await operated.stop('SIGTERM')).toBe(0); // a graceful stop: the log lines are written out
    expect(warning(operated.output())).toEqual([expect.objectContaining({ msg: expect.stringContaining('this sandbox serves 1 client and an admin token') })]);
    const restricted = await startCli(['--port', '0', '--data', ':memory:', '--token', 'acme-token,bolt-token', '--webhook-targets', 'public']);
    expect(await restricted.stop('SIGTERM')).toBe(0); // a graceful stop: the log lines are written out
    expect(restricted.output()).toContain('listening on');
    expect(warning(restricted.output())).toEqual([]);
  });
});
