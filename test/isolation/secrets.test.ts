import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restrictDataFiles } from '../../src/store/embedded/file/private-files.js';
import { startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { onPostgres } from '../support/store-kind.js';
import { Receiver } from '../webhooks/receiver.js';

// Three partners of a shared deployment, each with a webhook secret in the config file, and an admin.
const PARTNERS = [
  { id: 'acme', token: 'acme-partner-token-7c1e0f9a2b', secret: 'whsec_QWNtZVNlY3JldEFjbWVTZWNyZXRBY21lU2Vj' },
  { id: 'bolt', token: 'bolt-partner-token-44d8a1c6e3', secret: 'whsec_Qm9sdFNlY3JldEJvbHRTZWNyZXRCb2x0U2Vj' },
  { id: 'cargo', token: 'cargo-tok-9', secret: 'whsec_Q2FyZ29TZWNyZXRDYXJnb1NlY3JldENhcmdv' }, // shorter than 16: fully masked
];
/** A second token of acme's, for reading only: one client more in the config file, not one more client. */
const READER = 'acme-reader-token-3e9d06b4f8';
const ADMIN = 'admin-token-5f0b2e77d1c9';
const UNKNOWN = 'guessed-token-0a1b2c3d4e5f';
const NEW_SECRET = 'whsec_TmV3U2VjcmV0TmV3U2VjcmV0TmV3U2VjcmV0';
/** Every token and secret, and the keys inside the secrets (base64 after `whsec_`). */
const SECRETS = [
  ...PARTNERS.flatMap((p) => [p.token, p.secret, p.secret.slice(6)]),
  READER,
  ADMIN,
  UNKNOWN,
  NEW_SECRET,
  NEW_SECRET.slice(6),
];

let dir: string;
let data: string;
let cli: RunningCli;
let receiver: Receiver;
let output = '';
const filesWhileRunning: Array<{ name: string; mode: number }> = [];

async function send(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${cli.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  receiver = await Receiver.start();
  dir = mkdtempSync(join(tmpdir(), 'sandbox-secrets-'));
  data = join(dir, 'sandbox.json');
  const config = join(dir, 'clients.yaml');
  writeFileSync(config, `clients:\n${PARTNERS.map((p) => `  - id: ${p.id}\n    token: ${p.token}\n    role: partner\n    webhook:\n      url: ${receiver.url}\n      secret: ${p.secret}\n`).join('')}  - id: acme\n    token: ${READER}\n    role: read_only\n`);
  cli = await startCli(['--port', '0', '--data', data, '--config', config, '--clock', 'manual', '--awb-delay', '0', '--log-level', 'debug', '--seed', 'secrets'], {
    SANDBOX_ADMIN_TOKEN: ADMIN,
  });
  const [acme, bolt] = PARTNERS;
  expect(await send('POST', '/v1/order', acme!.token, createRequest(1))).toBe(201);
  expect(await send('POST', '/v1/order', ADMIN, createRequest(1), { 'X-Sandbox-Client': 'bolt' })).toBe(201);
  expect(await send('GET', '/v1/couriers', UNKNOWN)).toBe(401); // a failed auth
  // A token sent in a path by mistake, a partner's and an admin's: the request log line shows it redacted.
  expect(await send('GET', `/v1/order/tracking/${acme!.token}`, acme!.token)).toBe(404);
  expect(await send('GET', `/v1/order/tracking/${ADMIN}`, ADMIN, undefined, { 'X-Sandbox-Client': 'bolt' })).toBe(404);
  // And in a request of no client known: refused before its token was read, or on a path of no operation.
  expect(await send('GET', `/v1/order/tracking/${bolt!.token}`, UNKNOWN)).toBe(401);
  expect(await send('GET', `/v1/orders/${READER}`, acme!.token)).toBe(404);
  expect(await send('POST', '/__sandbox/clock/advance', acme!.token, { ms: 1_000 })).toBe(200); // acme's AWB and its webhook
  expect(await send('POST', '/__sandbox/clock/advance', ADMIN, { ms: 1_000 }, { 'X-Sandbox-Client': 'bolt' })).toBe(200); // bolt's: each client has its own clock
  expect(await send('PUT', '/__sandbox/webhook', bolt!.token, { url: receiver.url, secret: NEW_SECRET })).toBe(200);
  expect(await send('POST', '/__sandbox/webhooks/test', bolt!.token)).toBe(200);
  expect(await send('GET', '/__sandbox/webhook', bolt!.token)).toBe(200); // answers with the secret; must not log it
  expect(await send('POST', '/__sandbox/faults', acme!.token, { match: { headers: { authorization: `Bearer ${acme!.token}` } }, action: { type: 'status', status: 500 } })).toBe(201);
  expect(await send('GET', '/__sandbox/clients', ADMIN)).toBe(200);
  expect(receiver.received.length).toBeGreaterThanOrEqual(3);
  for (const name of readdirSync(dir)) if (name.startsWith('sandbox.json')) filesWhileRunning.push({ name, mode: statSync(join(dir, name)).mode & 0o777 });
  expect(await cli.stop('SIGTERM')).toBe(0);
  output = cli.output();
});
afterAll(async () => {
  // The CLI is stopped at the end of beforeAll; if a check there failed first, stop it here.
  if (cli && cli.process.exitCode === null && cli.process.signalCode === null) await cli.stop('SIGKILL');
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a shared deployment started from the CLI (three partners, an admin)', () => {
  it('shows configured tokens masked in the banner, and no webhook secret', () => {
    expect(output).toContain('token:  acme…a2b  (client acme, partner)');
    expect(output).toContain('token:  bolt…6e3  (client bolt, partner)');
    expect(output).toContain('token:  ****  (client cargo, partner)');
    expect(output).toContain('admin:  admi…1c9');
    expect(output.match(/secret: configured \(not shown\)/g)).toHaveLength(3);
  });

  it("logs how many clients it serves in its start line: three, acme's two tokens one client", () => {
    const started = output.split('\n').find((l) => l.includes('"msg":"started"'));
    expect(JSON.parse(started!)).toMatchObject({ clients: 3 });
  });

  it.each(SECRETS)('never prints %s: not in the banner, not in any log line (debug)', (secret) => {
    const lines = output.split('\n');
    expect(lines.filter((l) => l.startsWith('{')).length).toBeGreaterThan(10); // the logs were captured
    expect(lines.filter((l) => l.includes(secret))).toEqual([]);
  });

  // A data file's (the embedded store's): on PostgreSQL (test:postgres) there is none, so no such test.
  if (!onPostgres) it('keeps the data file, its journal and its lock private (mode 0600)', () => {
    const names = filesWhileRunning.map((f) => f.name);
    expect(names).toContain('sandbox.json.lock');
    expect(names.some((n) => n.startsWith('sandbox.json.wal.'))).toBe(true);
    const data = statSync(join(dir, 'sandbox.json')); // written at the checkpoint of the stop
    expect((data.mode & 0o777).toString(8)).toBe('600');
    expect(filesWhileRunning.filter((f) => f.mode !== 0o600)).toEqual([]);
    for (const name of readdirSync(dir).filter((n) => n.startsWith('sandbox.json'))) {
      expect(`${name} ${(statSync(join(dir, name)).mode & 0o777).toString(8)}`).toBe(`${name} 600`);
    }
  });
});

describe('data files left readable by an earlier version', () => {
  it('are made private (0600) at start; other files of the folder are left alone', () => {
    const folder = mkdtempSync(join(tmpdir(), 'sandbox-modes-'));
    try {
      for (const name of ['sandbox.json', 'sandbox.json.wal.3', 'sandbox.json.lock', 'notes.txt']) {
        writeFileSync(join(folder, name), '{}');
        chmodSync(join(folder, name), 0o644);
      }
      const changed = restrictDataFiles(join(folder, 'sandbox.json'));
      expect(changed).toHaveLength(3);
      const modes = Object.fromEntries(readdirSync(folder).map((n) => [n, (statSync(join(folder, n)).mode & 0o777).toString(8)]));
      expect(modes).toEqual({ 'sandbox.json': '600', 'sandbox.json.wal.3': '600', 'sandbox.json.lock': '600', 'notes.txt': '644' });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
