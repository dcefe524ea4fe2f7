import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { Receiver } from '../webhooks/receiver.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a replica whose database goes away while a webhook attempt is in flight', () => {
  it('keeps running: health answers 200 with the store degraded, and the provider API 503 with Retry-After', async () => {
    const receiver = await Receiver.start();
    receiver.respond = () => ({ status: 200, hang: true });
    const cli = await startCli(['--port', '0', '--database-url', await server.freshDatabase(), '--token', 'tok', '--webhook-url', receiver.url, '--awb-delay', '200ms', '--webhook-timeout', '2s', '--log-level', 'warn']);
    let exit: number | null | undefined;
    cli.process.once('exit', (code) => (exit = code));
    const headers = { authorization: 'Bearer tok', 'content-type': 'application/json' };
    try {
      const res = await fetch(`${cli.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      expect(res.status).toBe(201);
      for (let i = 0; i < 100 && receiver.received.length === 0; i += 1) await sleep(50);
      expect(receiver.received).toHaveLength(1); // the attempt is in flight: the receiver holds it for the 2 s timeout
      await server.stop(); // the database goes away under it
      await sleep(4_000); // the attempt times out, its job cannot be given back, the scheduler looks for due jobs again
      expect(exit, cli.output().slice(-2_000)).toBeUndefined();
      const health = await fetch(`${cli.url}/__sandbox/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ store: 'degraded' });
      const create = await fetch(`${cli.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      expect(create.status).toBe(503);
      expect(create.headers.get('retry-after')).toEqual(expect.any(String));
    } finally {
      if (exit === undefined) await cli.stop();
      await receiver.close();
    }
  }, 60_000);
});
