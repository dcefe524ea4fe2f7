import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { onPostgres } from '../support/store-kind.js';
import { tempDir } from '../support/tmp.js';

/** Creates an order with the token the first start printed, as the quick start's user does, then stops the sandbox; the token is returned. */
async function orderAsTheQuickStart(first: RunningCli): Promise<string> {
  const generated = /token:\s+(sbx_[0-9a-f]+)/.exec(first.output())![1]!;
  const created = await fetch(`${first.url}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${generated}`, 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) });
  expect(created.status).toBe(201);
  expect(await first.stop()).toBe(0);
  return generated;
}

// The quick start prints a generated token; a user who then starts the sandbox with
// `--token <that token> --token example-token` (as the example client once advised) loses
// sight of every order made so far: the token now names a client of its own.
describe("a data file's generated token given back with --token", () => {
  const dir = tempDir();
  const WARNING = /is the one this store generated for client \\"default\\", but it is configured for client \\"(client_[0-9a-f]{12})\\"/;

  it("is named at start as client default's token, with how to keep it default; a clients file entry with id default, or another id on purpose, is not", async () => {
    const data = join(dir(), 'sandbox.json');
    // A manual clock: the order's AWB job stays scheduled through every start below.
    const first = await startCli(['--port', '0', '--data', data, '--clock', 'manual']);
    const generated = await orderAsTheQuickStart(first);

    const byFlag = await startCli(['--port', '0', '--data', data, '--clock', 'manual', '--token', generated, '--token', 'example-token-0001']);
    // The warning comes before the `started` line, which follows the banner.
    await byFlag.printed('"msg":"started"');
    const renamed = WARNING.exec(byFlag.output());
    expect(await byFlag.stop()).toBe(0);
    expect(renamed, byFlag.output()).not.toBeNull();
    expect(byFlag.output()).toContain(`token:  ${generated}  (client ${renamed![1]}, partner)`);
    expect(byFlag.output()).toContain('{ token: <that token>, id: default }');
    // The token is configured (under another id): the warning of default left out is not this one's to give.
    expect(byFlag.output()).not.toMatch(/is not configured on this start/);
    // No log line carries a token.
    expect(byFlag.output().split('\n').filter((line) => line.startsWith('{') && line.includes(generated))).toEqual([]);

    for (const id of ['default', 'acme']) {
      const config = join(dir(), `clients-${id}.json`);
      writeFileSync(config, JSON.stringify({ clients: [{ token: generated, id }, { token: 'example-token-0001' }] }));
      const byFile = await startCli(['--port', '0', '--data', data, '--clock', 'manual', '--config', config]);
      await byFile.printed('"msg":"started"');
      expect(await byFile.stop()).toBe(0);
      expect(byFile.output()).toContain('"msg":"started"');
      expect(byFile.output()).not.toMatch(/is the one this store generated|is not configured on this start/);
    }
  }, 60_000);
});

// The embedded store drops the jobs of a client it does not know as they fall due; replicas of a database leave them to one that does.
describe.skipIf(onPostgres)("a start whose clients leave out the quick start's client default", () => {
  const dir = tempDir();

  it('says before its started line that the scheduled jobs of default will be dropped, naming its token masked', async () => {
    const data = join(dir(), 'sandbox.json');
    const first = await startCli(['--port', '0', '--data', data, '--clock', 'manual']);
    const generated = await orderAsTheQuickStart(first);

    const byFlag = await startCli(['--port', '0', '--data', data, '--clock', 'manual', '--token', 'example-token-0001']);
    await byFlag.printed('"msg":"started"');
    expect(await byFlag.stop()).toBe(0);
    const beforeStarted = byFlag.output().slice(0, byFlag.output().indexOf('"msg":"started"'));
    expect(beforeStarted).toMatch(/client \\"default\\" \(the token this store generated, sbx_…[0-9a-f]{3}\) is not configured on this start: its 1 scheduled job .* will be dropped as it falls due/);
    expect(byFlag.output()).not.toContain(generated);
  }, 60_000);
});
