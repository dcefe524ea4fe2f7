import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { Receiver } from '../webhooks/receiver.js';

const TOKEN = 'tok-logcheck-7f3a9c';
const UNKNOWN = 'tok-unknown-51d2e8';
const SECRET = 'whsec_U2VjcmV0U2VjcmV0U2VjcmV0U2VjcmV0MTIz';
const NEW_SECRET = 'whsec_TmV3U2VjcmV0TmV3U2VjcmV0TmV3U2VjcmV0';
const SECRETS = [TOKEN, UNKNOWN, SECRET, NEW_SECRET, SECRET.slice(6), NEW_SECRET.slice(6)];

let cli: RunningCli;
let receiver: Receiver;
let output = '';
let requests = 0;

async function send(method: string, path: string, body?: unknown, token = TOKEN, extra: Record<string, string> = {}): Promise<number> {
  requests++;
  const res = await fetch(`${cli.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  receiver = await Receiver.start();
  cli = await startCli(['--port', '0', '--data', ':memory:', '--token', TOKEN, '--webhook-url', receiver.url, '--webhook-secret', SECRET, '--clock', 'manual', '--awb-delay', '0', '--log-level', 'debug', '--strict', '--seed', 'logs']);
  expect(await send('POST', '/v1/order', createRequest(2))).toBe(201);
  expect(await send('POST', '/v1/order', { ...createRequest(1), sender_phone: 'bad' })).toBe(400); // a --strict warning
  expect(await send('GET', '/v1/couriers', undefined, UNKNOWN)).toBe(401);
  expect(await send('POST', '/__sandbox/clock/advance', { ms: 1_000 })).toBe(200); // AWBs and their webhooks
  expect(await send('PUT', '/__sandbox/webhook', { url: receiver.url, secret: NEW_SECRET })).toBe(200);
  expect(await send('POST', '/__sandbox/webhooks/test')).toBe(200);
  expect(await send('GET', '/__sandbox/webhook')).toBe(200); // answers with the secret; must not log it
  expect(await send('GET', `/${'p'.repeat(15_000)}`, undefined, UNKNOWN)).toBe(404); // anyone's long path: its log line is cut
  expect(receiver.received.length).toBeGreaterThanOrEqual(3);
  expect(await cli.stop('SIGTERM')).toBe(0);
  output = cli.output();
});
afterAll(() => receiver?.close());

describe('logs at --log-level debug', () => {
  it('hold the request, webhook and shutdown lines', () => {
    const logs = output.split('\n').filter((l) => l.startsWith('{'));
    expect(logs.length).toBeGreaterThan(requests);
    expect(output).toContain('"msg":"webhook attempt"');
  });

  it("name the client of each webhook attempt (delivery ids are each client's own)", () => {
    const attempts = output.split('\n').filter((l) => l.includes('"msg":"webhook attempt"')).map((l) => JSON.parse(l) as { client?: string; delivery: string });
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(new Set(attempts.map((a) => a.client))).toEqual(new Set([attempts[0]!.client]));
    expect(attempts[0]!.client).toMatch(/^client_[0-9a-f]{12}$/);
    // The endpoint by its id, never its URL (which may carry a partner's credentials).
    expect(attempts.every((a) => (a as { endpoint?: string }).endpoint === 'default')).toBe(true);
  });

  it('cut a path to 512 characters, saying how long it was (anyone, with no token, wrote 16 MB of log a second with 15 KB paths)', () => {
    const line = output.split('\n').find((l) => l.includes('"path":"/ppp'))!;
    expect(line.length).toBeLessThan(1_000);
    expect(JSON.parse(line).path).toBe(`/${'p'.repeat(511)}… (15001 characters)`);
  });

  it.each(SECRETS)('never contain %s (bearer tokens, webhook secrets and their keys)', (secret) => {
    const logs = output.split('\n').filter((l) => l.startsWith('{'));
    expect(logs.filter((l) => l.includes(secret))).toEqual([]);
  });

  it('prints its figures (the banner, meant for the operator, is not a log line)', () => {
    expect(output).toContain('token:  tok-…a9c  (client'); // the capture works: the start banner shows the token, masked as it was configured
    const logs = output.split('\n').filter((l) => l.startsWith('{'));
    console.log(`[security:logs] ${requests} requests with a token, 2 webhook secrets, ${receiver.received.length} webhooks delivered, ${logs.length} log lines at debug, 0 with a token or secret`);
  });
});
