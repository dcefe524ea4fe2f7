import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runListen } from '../../src/client/listen.js';
import { runTrigger } from '../../src/client/trigger.js';
import { apiPrefixHint } from '../../src/client/url.js';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { timed } from '../support/held-server.js';

const TOKEN = 'api-prefix-token';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ port: 0, data: ':memory:', clock: 'manual', tokens: [TOKEN], logLevel: 'silent' });
});
afterAll(() => sandbox.close());

describe('apiPrefixHint', () => {
  it.each([
    ['http://127.0.0.1:4010/v1', 404, " (--url is the sandbox's base URL, without /v1: use --url http://127.0.0.1:4010)"],
    ['https://gw.example/sandbox/v1/', 404, " (--url is the sandbox's base URL, without /v1: use --url https://gw.example/sandbox)"],
    ['http://127.0.0.1:4010/v1', 401, ''],
    ['http://127.0.0.1:4010', 404, ''],
    ['http://127.0.0.1:4010/v10', 404, ''],
  ])('for %s answered %i: %j', (url, status, hint) => {
    expect(apiPrefixHint(url, status)).toBe(hint);
  });
});

describe('a --url ending in /v1, the provider API rather than the sandbox', () => {
  it("trigger exits 1 with the sandbox's 404 and the base URL to use", async () => {
    const { code, stderr } = await timed((out, err) => runTrigger(['awb.generated', '--url', `${sandbox.url}/v1`, '--token', TOKEN], out, err));
    expect(code).toBe(1);
    expect(stderr).toMatch(/^shipping-sandbox trigger: the sandbox answered 404: No operation POST \/v1\/__sandbox\/events\/trigger\..* \(--url is the sandbox's base URL, without \/v1: use --url (\S+)\)\n$/);
    expect(/use --url (\S+)\)\n$/.exec(stderr)![1]).toBe(sandbox.url);
  });

  it("listen exits 1 with the sandbox's 404 and the base URL to use, without trying again", async () => {
    const { code, stderr } = await timed((out, err) =>
      runListen(['--url', `${sandbox.url}/v1`, '--token', TOKEN, '--forward-to', 'http://127.0.0.1:9/hooks', '--name', 'dev-laptop'], out, err, {}, AbortSignal.timeout(3000), { concurrency: 16, backoffMs: () => 50, silenceMs: 45_000 }),
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/^shipping-sandbox listen: the sandbox answered 404: No operation GET \/v1\/__sandbox\/listen\..* \(--url is the sandbox's base URL, without \/v1: use --url (\S+)\)\n$/);
    expect(/use --url (\S+)\)\n$/.exec(stderr)![1]).toBe(sandbox.url);
  });
});
