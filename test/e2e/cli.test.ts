import { connect } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
import { heldServer } from '../support/held-server.js';
import { specExample } from '../support/orders.js';
import { tempDir } from '../support/tmp.js';

describe('shipping-sandbox (the CLI)', () => {
  const dir = tempDir();

  it('lists every flag of the stable interface in --help', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    for (const flag of ['--port', '--host', '--data', '--token', '--webhook-url', '--webhook-secret', '--awb-delay', '--clock', '--speed', '--seed', '--config']) {
      expect(stdout).toContain(flag);
    }
    // The client commands, listed under Commands with what each does.
    expect(stdout).toMatch(/^Usage: shipping-sandbox \[options\] \[command\]$/m);
    expect(stdout).toMatch(/^ {2}report \[options\] +print a client's readiness report/m);
    expect(stdout).toMatch(/^ {2}trigger \[options\] <event> +fire a webhook event/m);
    expect(stdout).toMatch(/^ {2}deliveries +list or recover a client's webhook deliveries\s+\(deliveries\s+list,\s+deliveries\s+recover\)/m);
    expect(stdout).toMatch(/^ {2}listen \[options\] +forward a client's webhooks to a receiver/m);
    expect(stdout).not.toMatch(/^ {2}serve/m);
  });

  it('says which command is unknown', async () => {
    const { code, stderr } = await runCli(['repot']);
    expect(code).toBe(1);
    expect(stderr).toContain("unknown command 'repot' (shipping-sandbox --help lists the commands)");
    // Followed by words or by a client command's flags, it is still the command that is unknown.
    for (const args of [['delivery', 'list'], ['bogus', '--url', 'http://127.0.0.1:1']]) {
      const run = await runCli(args);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`unknown command '${args[0]}' (shipping-sandbox --help lists the commands)`);
    }
  });

  it('says a subcommand of deliveries comes first when a flag stands in its place', async () => {
    const { code, stderr } = await runCli(['deliveries', '--url', 'http://127.0.0.1:1', '--token', 't']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^shipping-sandbox deliveries: a subcommand comes first, before '--url'; the ones there are:\n {2}shipping-sandbox deliveries list /);
    expect(stderr).not.toContain('unknown option');
  });

  it('prints the base URL and a token, serves, and on SIGTERM writes the data file and exits 0', async () => {
    const data = join(dir(), 'nested', 'sandbox.json');
    const cli = await startCli(['--port', '0', '--data', data, '--seed', 'cli-test', '--log-level', 'silent']);
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const token = /token:\s+(\S+)/.exec(cli.output())![1]!;
    expect((await fetch(`${cli.url}/__sandbox/health`)).status).toBe(200);
    const created = await fetch(`${cli.url}/v1/order`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(specExample()),
    });
    expect(created.status).toBe(201);
    const { order_numbers } = (await created.json()) as { order_numbers: string[] };
    expect(await cli.stop('SIGTERM')).toBe(0);
    const file = JSON.parse(readFileSync(data, 'utf8'));
    expect(Object.keys(file.orders).sort()).toEqual([...order_numbers].sort());
    expect(file.meta.default_token).toBe(token);
  });

  it('keeps the same default token across restarts on the same data file', async () => {
    const data = join(dir(), 'sandbox.json');
    const tokens = [];
    for (let i = 0; i < 2; i += 1) {
      const cli = await startCli(['--port', '0', '--data', data, '--log-level', 'silent']);
      tokens.push(/token:\s+(\S+)/.exec(cli.output())![1]);
      expect(await cli.stop('SIGINT')).toBe(0);
    }
    expect(tokens[0]).toBe(tokens[1]);
  });

  it('takes tokens and the port from the environment', async () => {
    const cli = await startCli(['--data', ':memory:', '--log-level', 'silent'], { PORT: '0', SANDBOX_TOKENS: 'alpha, beta' });
    for (const token of ['alpha', 'beta']) {
      const res = await fetch(`${cli.url}/v1/order/tracking/SBXDLV00000001`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
    }
    expect(await cli.stop()).toBe(0);
  });

  it('refuses a corrupt data file with a message and exit 1, leaving the file untouched', async () => {
    const data = join(dir(), 'corrupt.json');
    writeFileSync(data, '{ not json');
    const { code, stderr } = await runCli(['--port', '0', '--data', data]);
    expect(code).toBe(1);
    expect(stderr).toContain('not valid JSON');
    expect(readFileSync(data, 'utf8')).toBe('{ not json');
    expect(existsSync(`${data}.wal.0`)).toBe(false);
  });

  it.each([
    [['--port', 'abc'], 'port must be a whole number'],
    [['--clock', 'sundial'], 'sundial'],
    [['--awb-delay', 'soon', '--data', ':memory:'], 'awbDelay'],
    [['--port', '0', '--data', ':memory:', '--scenario', 'nope'], "option '--scenario <name>' is invalid. scenario \"nope\" is not a scenario: use one of"],
    [['--port', '0', '--data', ':memory:', '--spec', '/no/such/spec.yaml'], "option '--spec <file>' is invalid. providerSpec /no/such/spec.yaml cannot be served: ENOENT"],
    // A URL may hold a password: the refusal names the flag, not the value.
    [['--port', '0', '--data', ':memory:', '--webhook-url', 'http://alice:s3cret@hooks.test/x'], "option '--webhook-url <url>' is invalid. webhookUrl carries credentials"],
  ])('rejects %j with a message and a non-zero exit', async (args, message) => {
    const { code, stderr } = await runCli(args);
    expect(code).not.toBe(0);
    expect(stderr).toContain(message);
  });

  it.each([
    [{ SANDBOX_SCENARIO: 'nope' }, 'variable SANDBOX_SCENARIO (--scenario) is invalid. scenario "nope" is not a scenario'],
    [{ SANDBOX_WEBHOOK_URL: '' }, 'variable SANDBOX_WEBHOOK_URL (--webhook-url) is invalid. webhookUrl must be a non-empty text'],
  ])('names the variable %j the refused value came from, not a flag the user never passed', async (env, message) => {
    const { code, stderr } = await runCli(['--port', '0', '--data', ':memory:'], env);
    expect(code).toBe(1);
    expect(stderr).toContain(message);
  });

  it.each([
    ['0', false],
    ['false', false],
    ['1', true],
    ['TRUE', true],
  ])('reads SANDBOX_FSYNC=%s as %s', async (value, on) => {
    const data = join(dir(), 'fsync.json');
    const cli = await startCli(['--port', '0', '--data', data, '--log-level', 'info'], { SANDBOX_FSYNC: value });
    await cli.stop();
    expect(cli.output()).toContain(`"fsync":${on}`);
  });

  it.each([
    // A trigger may have fired all the same: its line says where to look.
    [['trigger', 'awb.generated'], 'trigger', '; the event may have fired all the same: look for it with `shipping-sandbox deliveries list` before triggering it again'],
    [['deliveries', 'list'], 'deliveries list', ''],
    [['deliveries', 'recover', '--since', '2026-05-01T00:00:00Z'], 'deliveries recover', ''],
    [['report'], 'report', ''],
  ])('%j exits 2 after its --timeout, with one line, when what listens at --url never answers', async (command, name, more) => {
    const silent = await heldServer();
    try {
      const started = performance.now();
      const { code, stdout, stderr } = await runCli([...command, '--url', silent.url, '--token', 't', '--timeout', '200ms']);
      expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `shipping-sandbox ${name}: no answer from ${silent.url} within 200ms${more}\n` });
      expect(silent.requests).toHaveLength(1);
      // The process ends with the command: the connection the sandbox holds open keeps nothing waiting.
      expect(performance.now() - started).toBeLessThan(15_000);
    } finally {
      await silent.close();
    }
  });

  it('logs one JSON line per request with the client id and never the token', async () => {
    const cli = await startCli(['--port', '0', '--data', ':memory:', '--token', 'very-secret-token']);
    await fetch(`${cli.url}/v1/order/tracking/SBXDLV00000001`, { headers: { authorization: 'Bearer very-secret-token' } });
    await cli.stop();
    const line = cli.output().split('\n').find((l) => l.includes('"op":"trackOrder"'))!;
    expect(JSON.parse(line)).toMatchObject({ method: 'GET', status: 200, client: expect.stringMatching(/^client_/), ms: expect.any(Number) });
    expect(cli.output()).not.toContain('very-secret-token"');
  });

  it('names the fault rule that answered a request in its log line, so an injected 503 reads apart from a real one', async () => {
    const cli = await startCli(['--port', '0', '--data', ':memory:', '--token', 'very-secret-token']);
    const headers = { authorization: 'Bearer very-secret-token', 'content-type': 'application/json' };
    const rule = (await (await fetch(`${cli.url}/__sandbox/faults`, { method: 'POST', headers, body: JSON.stringify({ match: { operation_id: 'trackOrder' }, action: { type: 'status', status: 503 } }) })).json()) as { id: string };
    expect((await fetch(`${cli.url}/v1/order/tracking/SBXDLV00000001`, { headers })).status).toBe(503);
    expect((await fetch(`${cli.url}/v1/order/tracking/SBXDLV00000001`, { headers })).status).toBe(200);
    // A slowdown the client gave up on is logged when its connection closes, while the rule still holds the request: named too.
    const slow = (await (await fetch(`${cli.url}/__sandbox/faults`, { method: 'POST', headers, body: JSON.stringify({ match: { operation_id: 'listCouriers' }, action: { type: 'latency', ms: 5000 } }) })).json()) as { id: string };
    await expect(fetch(`${cli.url}/v1/couriers`, { headers, signal: AbortSignal.timeout(300) })).rejects.toThrow();
    await cli.printed('"aborted":true');
    await cli.stop();
    const lines = cli.output().split('\n').filter((l) => l.includes('"msg":"request"') && l.includes('"op":"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.op !== 'createFaultRule').map((l) => [l.op, l.status, l.fault, l.aborted])).toEqual([
      ['trackOrder', 503, rule.id, undefined],
      ['trackOrder', 200, undefined, undefined],
      ['listCouriers', null, slow.id, true],
    ]);
  });

  it('logs a request that offers an upgrade (curl --http2), a refused listen session (with its client once the token is known) and refusals before the client acted for is known, as any other', async () => {
    const cli = await startCli(['--port', '0', '--data', ':memory:', '--token', 'very-secret-token', '--admin-token', 'admin-secret-token']);
    const port = Number(new URL(cli.url).port);
    const raw = (request: string) =>
      new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(request));
        socket.on('data', () => undefined).on('close', () => resolve());
      });
    await raw('GET /v1/order/tracking/SBXDLV00000001 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer very-secret-token\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
    await raw('GET /__sandbox/listen?name=laptop HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    await raw('GET /__sandbox/listen?name=laptop HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer very-secret-token\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n');
    const partner = { headers: { authorization: 'Bearer very-secret-token' } };
    expect((await fetch(`${cli.url}/__sandbox/clients`, partner)).status).toBe(403);
    expect((await fetch(`${cli.url}/v1/order/tracking/%E0%A4%A`, partner)).status).toBe(400);
    await cli.stop();
    const lines = cli.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const client = lines.find((l) => l.op === 'trackOrder')?.client;
    expect(client).toMatch(/^client_/);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', path: '/__sandbox/clients', status: 403, client }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', path: '/v1/order/tracking/%E0%A4%A', status: 400, client, op: 'trackOrder' }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', method: 'GET', path: '/v1/order/tracking/SBXDLV00000001', status: 200, op: 'trackOrder' }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', method: 'GET', path: '/__sandbox/listen', status: 401 }));
    // The token's client is known by the time a listen session is refused for its handshake: the line names it, with the time taken.
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', method: 'GET', path: '/__sandbox/listen', status: 400, client, ms: expect.any(Number) }));
  });
});
