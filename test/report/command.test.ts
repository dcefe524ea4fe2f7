import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { runReport } from '../../src/client/report.js';
import { spawnCli } from '../support/cli.js';
import { heldServer } from '../support/held-server.js';
import { createRequest } from '../support/orders.js';

async function runWith(env: NodeJS.ProcessEnv, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runReport(argv, (t) => void (stdout += t), (t) => void (stderr += t), env);
  return { code, stdout, stderr };
}
const run = (...argv: string[]) => runWith({}, ...argv);

describe('shipping-sandbox report: its flags', () => {
  it.each([
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--fail-under', 'most'], /--fail-under.*must be a number from 0 to 100/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--fail-under', '101'], /must be a number from 0 to 100/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--format', 'pdf'], /--format.*json, junit, html/],
    [['--token', 't'], /--url/],
    [['--url', 'localhost:4010', '--token', 't'], /option '--url <url>' argument 'localhost:4010' is invalid\. must be an absolute http:\/\/ or https:\/\/ URL, e\.g\. http:\/\/127\.0\.0\.1:4010/],
    [['--url', 'http://127.0.0.1:9', '--token', ''], /option '--token <token>' argument '' is invalid\. must not be empty/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--client', ' '], /option '--client <id>' argument ' ' is invalid\. must not be empty/],
    // An unset variable would otherwise turn the gate off.
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--require', ''], /option '--require <items>' argument '' is invalid\. must name at least one catalogue item/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--require', 'webhook.bad-signature', '--require', ' , '], /option '--require <items>' argument ' , ' is invalid/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--timeout', 'abc'], /option '--timeout <duration>' argument 'abc' is invalid\. must be a duration above 0/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--timeout', '0'], /option '--timeout <duration>' argument '0' is invalid\. must be a duration above 0/],
  ])('exits 2 naming the flag for %j', async (argv, message) => {
    const { code, stderr } = await run(...argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('exits 2 saying why when the sandbox cannot be reached', async () => {
    const { code, stderr } = await run('--url', 'http://127.0.0.1:9', '--token', 't');
    expect(code).toBe(2);
    expect(stderr).toMatch(/^shipping-sandbox report: /);
  });

  it('exits 2 within --timeout saying nothing answered, when what listens at --url takes the connection and never answers', async () => {
    const silent = await heldServer();
    try {
      const started = performance.now();
      const { code, stdout, stderr } = await run('--url', silent.url, '--token', 't', '--timeout', '200ms');
      expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `shipping-sandbox report: no answer from ${silent.url} within 200ms\n` });
      expect(silent.requests).toEqual(['GET /__sandbox/report?format=json']);
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      await silent.close();
    }
  });

  it.each([
    ['an HTML page', '<html>a proxy</html>'],
    ['JSON that is no report', '{"status":"ok"}'],
  ])('exits 2 asking whether it is a sandbox when what answers 200 sends %s', async (_what, body) => {
    const page = await heldServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(body));
    try {
      const { code, stdout, stderr } = await run('--url', page.url, '--token', 't', '--fail-under', '80');
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
      expect(stderr).toMatch(/^shipping-sandbox report: http:\/\/127\.0\.0\.1:\d+\/? answered 200 with no readiness report: is it a shipping sandbox\?\n$/);
    } finally {
      await page.close();
    }
  });
});

describe('shipping-sandbox report: the token from the variables the server reads', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['token-a', 'token-b'], logLevel: 'silent' });
  });
  afterAll(() => sandbox.close());
  const clientOf = (stdout: string) => (JSON.parse(stdout) as { client_id: string }).client_id;

  it('takes the token from SANDBOX_TOKENS when it holds one, with nothing on stderr', async () => {
    const { code, stdout, stderr } = await runWith({ SANDBOX_TOKENS: ' token-b ' }, '--url', sandbox.url);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(clientOf(stdout)).toBe(sandbox.clients.find((c) => c.token === 'token-b')!.id);
  });

  it('still takes the older SANDBOX_TOKEN, saying on stderr that it is deprecated', async () => {
    const { code, stdout, stderr } = await runWith({ SANDBOX_TOKEN: 'token-a' }, '--url', sandbox.url);
    expect(code).toBe(0);
    expect(clientOf(stdout)).toBe(sandbox.clients.find((c) => c.token === 'token-a')!.id);
    expect(stderr).toMatch(/SANDBOX_TOKEN is deprecated.*SANDBOX_TOKENS/);
  });

  it('prefers --token to the variables, and SANDBOX_TOKENS to SANDBOX_TOKEN', async () => {
    const flag = await runWith({ SANDBOX_TOKENS: 'token-b', SANDBOX_TOKEN: 'token-b' }, '--url', sandbox.url, '--token', 'token-a');
    expect(clientOf(flag.stdout)).toBe(sandbox.clients.find((c) => c.token === 'token-a')!.id);
    const both = await runWith({ SANDBOX_TOKENS: 'token-b', SANDBOX_TOKEN: 'token-a' }, '--url', sandbox.url);
    expect(clientOf(both.stdout)).toBe(sandbox.clients.find((c) => c.token === 'token-b')!.id);
    expect(both.stderr).toBe('');
  });

  it('exits 2 asking for --token when SANDBOX_TOKENS holds several tokens, or when no token is given at all', async () => {
    const several = await runWith({ SANDBOX_TOKENS: 'token-a,token-b' }, '--url', sandbox.url);
    expect(several.code).toBe(2);
    expect(several.stderr).toMatch(/SANDBOX_TOKENS holds 2 tokens.*--token/);
    const none = await runWith({}, '--url', sandbox.url);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--token/);
  });

  it.each([
    [{ SANDBOX_TOKENS: 'tok€n' }, /the token in SANDBOX_TOKENS is not one the sandbox can take: a token is visible text without spaces, in characters of one byte/],
    [{ SANDBOX_TOKENS: 'token-a\u0000' }, /the token in SANDBOX_TOKENS is not one the sandbox can take/],
    [{ SANDBOX_TOKEN: 'token-a\r\nX-Injected: 1' }, /the token in SANDBOX_TOKEN is not one the sandbox can take/],
  ])('exits 2 naming the variable when its token cannot be sent in a header (%j)', async (env, message) => {
    const { code, stdout, stderr } = await runWith(env, '--url', sandbox.url);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/TypeError|Invalid character/);
  });
});

describe('shipping-sandbox report: a gate after a Pact verification', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['token-a'], logLevel: 'silent' });
  });
  afterAll(() => sandbox.close());

  it('says that the current run is the one a provider state started, which grades Pact and not the client, gate or no gate', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { authorization: 'Bearer token-a', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/__sandbox/runs', { name: 'build-8812' })).status).toBe(201);
    const named = await run('--url', sandbox.url, '--token', 'token-a', '--fail-under', '80');
    expect(named.stderr).not.toMatch(/pact/);
    expect((await post('/__sandbox/provider-states', { state: 'an order is in transit', action: 'setup' })).status).toBe(200);
    const { code, stderr } = await run('--url', sandbox.url, '--token', 'token-a', '--fail-under', '80');
    expect(code).toBe(1);
    expect(stderr).toMatch(/the current run is "pact", which a Pact verification's provider states started: .*Start your named run, then your client's tests, after the verification/);
    expect(stderr).toMatch(/below --fail-under 80/);
    // A gate that Pact's requests would pass fails all the same, as the documented jq gate does: nobody graded the client.
    const passing = await run('--url', sandbox.url, '--token', 'token-a', '--fail-under', '0');
    expect(passing.code).toBe(1);
    expect(passing.stderr).toMatch(/the current run is "pact"/);
    // Said also where no gate is given: a report of Pact's requests is not the client's, whatever it says.
    const ungated = await run('--url', sandbox.url, '--token', 'token-a');
    expect(ungated.code).toBe(0);
    expect(ungated.stderr).toMatch(/the current run is "pact"/);
  });
});

describe('shipping-sandbox report --require', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['token-a'], logLevel: 'silent' });
    // One create: op.create-order handled, everything else not exercised.
    const created = await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers: { authorization: 'Bearer token-a', 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) });
    expect(created.status).toBe(201);
  });
  afterAll(() => sandbox.close());

  it('exits 1 naming each required item that is not handled, whatever the share, and 0 when all are', async () => {
    const missing = await run('--url', sandbox.url, '--token', 'token-a', '--require', 'webhook.bad-signature,check.bad-signature', '--require', 'fault.retry-after');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/webhook\.bad-signature is required \(--require\) and not exercised/);
    expect(missing.stderr).toMatch(/check\.bad-signature is required/);
    expect(missing.stderr).toMatch(/fault\.retry-after is required/);
    const none = await run('--url', sandbox.url, '--token', 'token-a', '--require', 'op.create-order');
    expect({ code: none.code, stderr: none.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it.skipIf(spawnSync('jq', ['--version']).status !== 0)('agrees with the jq gate that the CI guide gives a job without Node: the share, --require and a Pact run', async () => {
    const guide = readFileSync('docs/guides/ci-and-readiness.md', 'utf8');
    const script = /\nREQUIRE=([^\n]+)\njq -e --arg require "\$REQUIRE" '([^']+)' report\.json/.exec(guide);
    expect(script).not.toBeNull();
    const [, required, program] = script!;
    const report = JSON.parse(await (await fetch(`${sandbox.url}/__sandbox/report?format=json`, { headers: { authorization: 'Bearer token-a' } })).text()) as { summary: { handled: number; graded: number }; items: Array<{ id: string; graded: boolean }> };
    // The guide's list names graded items only (a misspelt one would fail every job).
    for (const id of required!.split(',')) expect(report.items.find((i) => i.id === id)?.graded, id).toBe(true);
    const gate = (require: string, summary: { handled: number; graded: number }, run: object | null = null) =>
      spawnSync('jq', ['-e', '--arg', 'require', require, program!], { input: JSON.stringify({ ...report, summary: { ...report.summary, ...summary }, run }) }).status;
    const passing = { handled: 18, graded: 22 };
    expect(gate('op.create-order', passing)).toBe(0);
    expect(gate('op.create-order', { handled: 17, graded: 22 })).toBe(1);
    expect(gate('op.create-order,webhook.bad-signature', passing)).toBe(1);
    expect(gate('op.create-ordr', passing)).toBe(1);
    // A Pact run's report grades Pact's requests: the gate fails it, as the CLI does.
    expect(gate('op.create-order', passing, { name: 'pact' })).toBe(1);
    expect(gate('op.create-order', passing, { name: 'build-4242' })).toBe(0);
  });

  it('prints a refusal as its message and field errors, not the raw envelope, and names the flag that sets X-Sandbox-Client', async () => {
    const bad = await run('--url', sandbox.url, '--token', 'not-a-token');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^shipping-sandbox report: the sandbox answered 401: [^{]+\n/);
  });

  it('exits 2 naming an item the catalogue does not have, and listing those it has, printing no report', async () => {
    const { code, stdout, stderr } = await run('--url', sandbox.url, '--token', 'token-a', '--require', 'webhook.signature');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/--require names no graded item "webhook.signature"; the graded items are op\.create-order, .*webhook\.bad-signature/);
    // One the sandbox cannot grade could never pass.
    expect((await run('--url', sandbox.url, '--token', 'token-a', '--require', 'create.no-awb-expected')).code).toBe(2);
  });
});

describe('shipping-sandbox report: a failed gate with a miss', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['token-a'], logLevel: 'silent' });
  });
  afterAll(() => sandbox.close());

  it('says a miss counts until the run ends, and how to start a new one, when a failed gate has a miss', async () => {
    const headers = { authorization: 'Bearer token-a', 'content-type': 'application/json' };
    expect((await fetch(`${sandbox.url}/__sandbox/runs`, { method: 'POST', headers, body: JSON.stringify({ name: 'ci-7' }) })).status).toBe(201);
    const hint = /a miss counts until the run ends \(this one is "ci-7"\): after a fix, start a new run \(POST \/__sandbox\/runs\)/;
    // Only not exercised: nothing to start over for.
    const unexercised = await run('--url', sandbox.url, '--token', 'token-a', '--require', 'error.create-400');
    expect(unexercised.code).toBe(1);
    expect(unexercised.stderr).not.toMatch(hint);
    // A 400 sent again unchanged is a miss.
    const invalid = { ...createRequest(1), items: [] };
    for (let i = 0; i < 2; i += 1) expect((await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(invalid) })).status).toBe(400);
    // A gate failed on another item (not exercised), the share's gate passed: the miss failed nothing.
    const other = await run('--url', sandbox.url, '--token', 'token-a', '--fail-under', '0', '--require', 'error.create-403');
    expect(other.code).toBe(1);
    expect(other.stderr).not.toMatch(hint);
    const missed = await run('--url', sandbox.url, '--token', 'token-a', '--require', 'error.create-400');
    expect(missed.code).toBe(1);
    expect(missed.stderr).toMatch(/error\.create-400 is required \(--require\) and not handled: Missed/);
    // …and what the client did, as the JUnit report shows it: the requests that missed it.
    expect(missed.stderr).toMatch(/not handled: Missed[^\n]*\n {2}Last missed:\n {2}\d{4}-\d\d-\d\dT[\d:.]+Z sent again unchanged: POST \/v1\/order → 400$/m);
    expect(missed.stderr).toMatch(hint);
    // Not exercised at all: nothing behind it to show.
    expect(unexercised.stderr).not.toContain('Last ');
  });

});

describe('shipping-sandbox report: the gate itself', () => {
  it('compares --fail-under with the exact share, not the rounded percentage: 18 of 22 is below 81.82', async () => {
    const report = { summary: { handled: 18, graded: 22, handled_percent: 81.82 }, items: [], coverage: { summary: { percent: 100, statuses: 1, statuses_exercised: 1 } }, run: null };
    const page = await heldServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(report)));
    try {
      const { code, stderr } = await run('--url', page.url, '--token', 't', '--fail-under', '81.82');
      expect(code).toBe(1);
      expect(stderr).toMatch(/81\.82% handled \(18 of 22 graded items\), below --fail-under 81\.82/);
      expect((await run('--url', page.url, '--token', 't', '--fail-under', '81.81')).code).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('compares without a division that lands just under an exact share: 29 of 100 is not below 29, for the coverage gate too', async () => {
    const report = { summary: { handled: 29, graded: 100, handled_percent: 29 }, items: [], coverage: { summary: { percent: 29, statuses: 100, statuses_exercised: 29 } }, run: null };
    const page = await heldServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(report)));
    try {
      expect((await run('--url', page.url, '--token', 't', '--fail-under', '29', '--coverage-under', '29')).code).toBe(0);
      expect((await run('--url', page.url, '--token', 't', '--coverage-under', '29.01')).code).toBe(1);
    } finally {
      await page.close();
    }
  });

  it('prints a JUnit report that two reads of the gate agree with: traffic between the reads changed the grades', async () => {
    const json = (handled: number) => JSON.stringify({ summary: { handled, graded: 10, handled_percent: handled * 10 }, items: [], coverage: { summary: { percent: 100, statuses: 1, statuses_exercised: 1 } }, run: null });
    // The report as the client's webhook retries change it: 9 of 10 handled, then 7 from the second read on.
    let jsonReads = 0;
    let junitReads = 0;
    const page = await heldServer((req, res) => {
      if (req.url!.includes('format=json')) res.writeHead(200).end(json(++jsonReads === 1 ? 9 : 7));
      else res.writeHead(200).end(`<testsuites handled="${++junitReads === 1 ? 9 : 7}"/>`);
    });
    try {
      const { code, stdout, stderr } = await run('--url', page.url, '--token', 't', '--format', 'junit', '--fail-under', '80');
      expect(stdout).toBe('<testsuites handled="7"/>');
      expect(stderr).toMatch(/70% handled \(7 of 10 graded items\), below --fail-under 80/);
      expect(code).toBe(1);
    } finally {
      await page.close();
    }
  });

  it("exits with the gate's code, not a crash, when whoever reads its output closes the pipe", async () => {
    const sandbox = await createSandbox({ clock: 'manual', tokens: ['token-a'], logLevel: 'silent' });
    try {
      const child = spawnCli(['report', '--url', sandbox.url, '--token', 'token-a', '--format', 'html', '--fail-under', '50']);
      child.stdout!.destroy(); // `| head -0`: the reader is gone before the report is written
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise((resolve) => child.once('exit', resolve));
      expect(stderr).not.toMatch(/EPIPE/);
      expect(stderr).toMatch(/below --fail-under 50/);
      expect(code).toBe(1);
    } finally {
      await sandbox.close();
    }
  }, 30_000);
});

describe('shipping-sandbox report: a sandbox behind a gateway path', () => {
  let sandbox: Sandbox;
  let gateway: Server;
  let gatewayUrl: string;
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['token-a'], logLevel: 'silent' });
    // Serves the sandbox under /sandbox only, as a gateway that routes by path would; its root is something else.
    gateway = createServer(async (req, res) => {
      if (!req.url?.startsWith('/sandbox/')) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('the gateway root');
      const answer = await fetch(`${sandbox.url}${req.url.slice('/sandbox'.length)}`, { headers: { authorization: String(req.headers.authorization) } });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(await answer.text());
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/sandbox`;
  });
  afterAll(async () => {
    await new Promise((resolve) => gateway.close(resolve));
    await sandbox.close();
  });

  it("reads the report under the --url's path, with or without a trailing slash", async () => {
    for (const url of [gatewayUrl, `${gatewayUrl}/`]) {
      const { code, stdout, stderr } = await run('--url', url, '--token', 'token-a');
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(stdout)).toMatchObject({ client_id: expect.any(String), items: expect.any(Array) });
    }
  });
});
