import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { createRequest } from '../support/orders.js';
import { databaseFor, onPostgres } from '../support/store-kind.js';
import { tempDir } from '../support/tmp.js';
import { Receiver } from '../webhooks/receiver.js';

// A graceful stop lets the webhook attempts under way end (its drain), and the readiness
// report must count them: on PostgreSQL a rolling restart under load lost the judgements of
// the attempts that ended during the drain (the store closed before they were written). The
// embedded store keeps reports in memory, like the request journal: a restart starts afresh.
const TOKEN = 'stop-judging-token';
const dir = tempDir();
let receiver: Receiver | undefined;
let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = receiver = undefined;
});

const start = async (data: string, webhookUrl: string) =>
  createSandbox({ port: 0, clock: 'real', awbDelay: '50ms', logLevel: 'silent', tokens: [TOKEN], webhookUrl, ...(onPostgres ? { databaseUrl: (await databaseFor(data)).url } : { data }) });

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

describe.skipIf(!onPostgres)('the readiness report across a graceful stop (PostgreSQL)', () => {
  it('counts the AWB webhooks acknowledged while the stop drained the attempts under way', async () => {
    const data = join(dir(), 'sandbox.json');
    receiver = await Receiver.start();
    // Every attempt waits for its 2xx until the stop has begun: all of them end in its drain.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    receiver.respond = () => ({ status: 200, body: 'ok', after: released });
    const webhookUrl = `http://127.0.0.1:${receiver.port}/hooks`;
    sandbox = await start(data, webhookUrl);
    const created = await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(8)) });
    expect(created.status).toBe(201);
    await expect.poll(() => receiver!.received.length, { timeout: 10_000 }).toBe(8);
    const closed = sandbox.close();
    setTimeout(release, 50);
    await closed;
    sandbox = await start(data, webhookUrl);
    const report = (await (await fetch(`${sandbox.url}/__sandbox/report`, { headers })).json()) as { items: Array<{ id: string; exercised: number; handled: number }> };
    expect(receiver.received).toHaveLength(8);
    const acknowledged = report.items.find((item) => item.id === 'webhook.awb-acknowledged');
    expect(acknowledged, JSON.stringify(acknowledged)).toMatchObject({ exercised: 8, handled: 8 });
  }, 30_000);
});
