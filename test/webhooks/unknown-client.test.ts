import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import type { SandboxOptions } from '../../src/config/options.js';
import { createRequest } from '../support/orders.js';
import { databaseFor, onPostgres, releaseDatabase } from '../support/store-kind.js';
import { tempDir } from '../support/tmp.js';
import { Receiver } from './receiver.js';

// A sandbox (a replica of a shared database, or a restart with another clients config)
// that does not know a client meets that client's due jobs: it must not drop the client's
// webhooks (hostile review: a replica started without one partner left a third of that
// partner's AWB webhooks unsent, silently).

const PARTNER = { token: 'partner-b-token', id: 'partner-b' };
const OTHER = { token: 'partner-a-token', id: 'partner-a' };

let receiver: Receiver;
let database: string | undefined;
const dir = tempDir();
const started: Sandbox[] = [];

beforeEach(async () => {
  receiver = await Receiver.start();
  database = onPostgres ? (await databaseFor(undefined)).url : undefined;
});
afterEach(async () => {
  for (const sandbox of started.splice(0)) await sandbox.close().catch(() => undefined);
  await receiver.close();
  if (database) await releaseDatabase(database);
});

async function start(clients: SandboxOptions['clients']): Promise<Sandbox> {
  const sandbox = await createSandbox({
    port: 0,
    clock: 'real',
    awbDelay: '1s',
    logLevel: 'silent',
    webhookUrl: `${receiver.url}/hooks`,
    clients,
    ...(database ? { databaseUrl: database } : { data: join(dir(), 'sandbox.json') }),
  });
  started.push(sandbox);
  return sandbox;
}

const post = (sandbox: Sandbox, path: string, token: string, body?: unknown) =>
  fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

describe('due jobs of a client this sandbox does not know', () => {
  it('fail and are tried again (logged), so the AWB and its webhook come once a sandbox that knows the client runs them', async () => {
    const first = await start([OTHER, PARTNER]);
    const created = (await (await post(first, '/v1/order', PARTNER.token, createRequest(1))).json()) as { order_numbers: string[] };
    await first.close();
    // Without the partner, while the AWB falls due: its job runs here.
    const without = await start([OTHER]);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await without.close();
    expect(receiver.received).toEqual([]);
    // With the partner again: its job, tried again later, makes the AWB and sends its webhook.
    const again = await start([OTHER, PARTNER]);
    expect((await post(again, '/__sandbox/clock/advance', PARTNER.token, { ms: 60 * 60_000 })).status).toBe(200);
    const order = (await (await fetch(`${again.url}/__sandbox/orders/${created.order_numbers[0]}`, { headers: { authorization: `Bearer ${PARTNER.token}` } })).json()) as { awb: string | null };
    expect(order.awb).not.toBeNull();
    expect(receiver.received.map((webhook) => [webhook.json.event, webhook.json.order_no])).toEqual([['awb.generated', created.order_numbers[0]]]);
  });
});
