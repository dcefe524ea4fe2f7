import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import type { SandboxOptions } from '../../src/config/options.js';
import type { Order } from '../../src/records/index.js';
import { PgJobs } from '../../src/store/postgres/jobs.js';
import { createRequest } from '../support/orders.js';
import { databaseFor, onPostgres, releaseDatabase } from '../support/store-kind.js';
import { tempDir } from '../support/tmp.js';
import { Receiver } from './receiver.js';

// A sandbox that does not know a client meets that client's due jobs. On the embedded store
// (a restart with another clients config: the client was removed) it drops them as they
// fall due, saying so once per client, and a delivery among them ends failed, so recover
// sends it should the client come back (its records go by retention). A replica of a shared
// database (a config change rolled out half way) must not drop the client's webhooks
// (hostile review: a replica started without one partner left a third of that partner's
// AWB webhooks unsent, silently), nor fail them while a replica that has the client runs
// (an operator review: the one that failed them claimed their retries first, until it
// dropped them): it leaves them to the others a while (two of their looks for due jobs),
// then fails them, and they are tried again, so a client that no replica has still ends so.

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

async function start(clients: SandboxOptions['clients'], options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox({
    port: 0,
    clock: 'real',
    awbDelay: '1s',
    logLevel: 'silent',
    webhookUrl: `${receiver.url}/hooks`,
    clients,
    ...(database ? { databaseUrl: database } : { data: join(dir(), 'sandbox.json') }),
    ...options,
  });
  started.push(sandbox);
  return sandbox;
}

const post = (sandbox: Sandbox, path: string, token: string, body?: unknown) =>
  fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

describe.skipIf(onPostgres)('due jobs of a client the embedded store\'s sandbox does not know', () => {
  it('are dropped as they fall due, unrun, with one warning naming the client and no error; back with the client, its order waits for its AWB', async () => {
    const first = await start([OTHER, PARTNER], { awbDelay: '2s' });
    const created = (await (await post(first, '/v1/order', PARTNER.token, createRequest(1))).json()) as { order_numbers: string[] };
    await first.close();
    // Without the partner, while the AWB falls due.
    const without = await start([OTHER], { awbDelay: '2s' });
    const warned = vi.spyOn(without.services.logger, 'warn');
    const failed = vi.spyOn(without.services.logger, 'error');
    for (const begun = Date.now(); (await without.services.storage.jobs.count()) > 0 && Date.now() - begun < 5_000; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await without.services.storage.jobs.count()).toBe(0);
    await without.close();
    expect(receiver.received).toEqual([]);
    expect(warned.mock.calls.map(([fields]) => fields)).toEqual([{ client: PARTNER.id, dropped: 1 }]);
    expect(String(warned.mock.calls[0]?.[1])).toMatch(/not configured on this sandbox.*--retention/);
    expect(failed).not.toHaveBeenCalled();
    // With the partner again: nothing was left due; the AWB is made by hand.
    const again = await start([OTHER, PARTNER]);
    expect((await post(again, '/__sandbox/clock/advance', PARTNER.token, { ms: 60 * 60_000 })).status).toBe(200);
    const order = (await (await fetch(`${again.url}/__sandbox/orders/${created.order_numbers[0]}`, { headers: { authorization: `Bearer ${PARTNER.token}` } })).json()) as { awb: string | null };
    expect(order.awb).toBeNull();
    expect(receiver.received).toEqual([]);
  });
});

describe.runIf(onPostgres)('due jobs of a client a replica of a shared database does not know', () => {
  it('are left to a replica that has the client: with one that lacks it running beside it, every AWB webhook comes once, and the one that lacks it fails none', async () => {
    const withPartner = await start([OTHER, PARTNER]);
    const without = await start([OTHER]);
    const failed = vi.spyOn(without.services.logger, 'error');
    const created: string[] = [];
    for (let i = 0; i < 20; i += 1) created.push(...((await (await post(withPartner, '/v1/order', PARTNER.token, createRequest(1))).json()) as { order_numbers: string[] }).order_numbers);
    for (const begun = Date.now(); receiver.received.length < created.length && Date.now() - begun < 10_000; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received.map((webhook) => webhook.json.order_no).sort()).toEqual([...created].sort());
    expect(failed).not.toHaveBeenCalled();
  });

  it('are given back by a replica that lacks the client once by each drain that met them at most, whatever fraction of a ms its wait comes to (--job-lease 1001ms: 500.5 ms), not claimed and given back in a loop', async () => {
    const first = await start([OTHER, PARTNER], { jobLease: '1001ms' });
    expect((await post(first, '/v1/order', PARTNER.token, createRequest(1))).status).toBe(201);
    await first.close();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const released = vi.spyOn(PgJobs.prototype, 'release');
    const claimed = vi.spyOn(PgJobs.prototype, 'claim');
    try {
      await start([OTHER], { jobLease: '1001ms' });
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      // Once by each drain that met the job before the client's jobs were left (the catch-up at start, a wake-up): not in a loop.
      expect(released.mock.calls.length).toBeLessThanOrEqual(3);
      expect(claimed.mock.calls.length).toBeLessThan(30);
    } finally {
      released.mockRestore();
      claimed.mockRestore();
    }
  });

  it('are left to the others all together by a replica that lacks the client, when several fall due at once (one create of three items): none is failed before the wait', async () => {
    const first = await start([OTHER, PARTNER]);
    expect((await post(first, '/v1/order', PARTNER.token, createRequest(3))).status).toBe(201);
    await first.close();
    const without = await start([OTHER]);
    const failed = vi.spyOn(without.services.logger, 'error');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(failed).not.toHaveBeenCalled();
  });

  it('are left due a while by a replica that lacks the client, so the AWB and its webhook come once a sandbox that knows the client runs them', async () => {
    const first = await start([OTHER, PARTNER]);
    const created = (await (await post(first, '/v1/order', PARTNER.token, createRequest(1))).json()) as { order_numbers: string[] };
    await first.close();
    // Without the partner, while the AWB falls due: its job is left for a replica with the partner (10 s by default), not failed.
    const without = await start([OTHER]);
    const failed = vi.spyOn(without.services.logger, 'error');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await without.close();
    expect(failed).not.toHaveBeenCalled();
    expect(receiver.received).toEqual([]);
    // With the partner again: its job, tried again later, makes the AWB and sends its webhook.
    const again = await start([OTHER, PARTNER]);
    expect((await post(again, '/__sandbox/clock/advance', PARTNER.token, { ms: 60 * 60_000 })).status).toBe(200);
    const order = (await (await fetch(`${again.url}/__sandbox/orders/${created.order_numbers[0]}`, { headers: { authorization: `Bearer ${PARTNER.token}` } })).json()) as { awb: string | null };
    expect(order.awb).not.toBeNull();
    expect(receiver.received.map((webhook) => [webhook.json.event, webhook.json.order_no])).toEqual([['awb.generated', created.order_numbers[0]]]);
  });
});

describe('a webhook delivery of a client the sandbox does not know', () => {
  it('a delivery whose attempt fell due without its client ends failed, saying why, and recover sends it with the client back', async () => {
    receiver.respond = () => ({ status: 500, body: 'down' });
    const first = await start([OTHER, PARTNER], { awbDelay: '0', webhookRetries: '0,10m' });
    await post(first, '/v1/order', PARTNER.token, createRequest(1));
    const deliveries = async (sandbox: Sandbox) =>
      ((await (await fetch(`${sandbox.url}/__sandbox/webhooks/deliveries`, { headers: { authorization: `Bearer ${PARTNER.token}` } })).json()) as { deliveries: { status: string; last_error: string | null }[] }).deliveries;
    // Its first attempt failed; its retry is 10 minutes away.
    for (const begun = Date.now(); (await deliveries(first))[0]?.last_error == null && Date.now() - begun < 5_000; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await deliveries(first)).map((d) => [d.status, d.last_error])).toEqual([['pending', 'HTTP 500']]);
    await first.close();
    // Without the partner, on a clock fast enough that its retry falls due. On PostgreSQL no replica with the partner
    // runs meanwhile: the job's five tries, each left to the others for 0.5 s (two looks of 0.25 s, a quarter of --job-lease).
    const without = await start([OTHER], { speed: 100_000, ...(onPostgres ? { jobLease: '1s' } : {}) });
    const errors = vi.spyOn(without.services.logger, 'error');
    const failedTries = () => errors.mock.calls.filter((call) => call[1] === 'scheduled job failed').length;
    // On PostgreSQL until the fifth, then a second more, in which a sixth (tries 0.5 s apart) would show.
    if (onPostgres) for (const begun = Date.now(); failedTries() < 5 && Date.now() - begun < 15_000; ) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, onPostgres ? 1_000 : 1_500));
    await without.close();
    // Each try that failed is one line saying which it was and why, without a stack (an operator counts them).
    const tries = errors.mock.calls.filter((call) => call[1] === 'scheduled job failed').map(([fields]) => fields);
    const why = expect.stringMatching(/^Client "partner-b" is not configured on this sandbox, so its webhook delivery \S+ cannot be attempted here/);
    expect(tries).toEqual(onPostgres ? [1, 2, 3, 4, 5].map((n) => ({ kind: expect.any(String), key: expect.any(String), client: PARTNER.id, try: n, tries: 5, error: why })) : []);
    receiver.respond = () => ({ status: 200, body: 'ok' });
    const again = await start([OTHER, PARTNER]);
    const [failed] = await deliveries(again);
    // Dropped at once on the embedded store; on a shared database after the job's fifth try.
    const dropped = onPostgres ? /could not make its attempts.*recover/ : /not configured on the sandbox.*recover/;
    expect(failed).toMatchObject({ status: 'failed', last_error: expect.stringMatching(dropped) });
    const recovered = (await (await post(again, '/__sandbox/webhooks/recover', PARTNER.token, { since: '2000-01-01T00:00:00Z' })).json()) as { queued: number };
    expect(recovered.queued).toBe(1);
    for (const begun = Date.now(); receiver.received.length < 2 && Date.now() - begun < 5_000; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received.map((webhook) => webhook.json.event)).toEqual(['awb.generated', 'awb.generated']);
  });
});

describe('an order event of a client the sandbox does not know (a replica of a shared database runs its job)', () => {
  it('fails the job saying that the change of the order was not saved either, not only that its webhooks were not made', async () => {
    const sandbox = await start([OTHER]);
    const order = { client_id: PARTNER.id, order_no: '512345678901' } as Order;
    const emitted = sandbox.services.storage.transaction((tx) => sandbox.services.events.emit({ type: 'awb.generated', order, at: 0 }, tx));
    await expect(emitted).rejects.toThrow(
      'Client "partner-b" is not configured on this sandbox, so the job that changes its order 512345678901 (making its awb.generated event and webhooks) cannot run here: nothing of it was saved; the job is tried again later',
    );
  });
});
