import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { onPostgres } from '../support/store-kind.js';

let sandbox: TestSandbox | undefined;
let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server?.closeAllConnections();
  await sandbox?.close();
  server = undefined;
  sandbox = undefined;
});

/** POSTs a create over its own keep-alive connection of `agent`; resolves with the status once the answer is read. */
function create(port: number, agent: Agent, token: string, items: number): Promise<number> {
  const body = JSON.stringify(createRequest(items));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/v1/order', method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('requests served in turns between clients', () => {
  // On PostgreSQL turns order when requests start; their statements then wait for the pool's connections first come first served (README, Fairness).
  it.skipIf(onPostgres)("answers a client's create before most of another client's creates already waiting", async () => {
    sandbox = await testSandbox();
    server = createServer(sandbox.app);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const heavyAgent = new Agent({ keepAlive: true, maxSockets: 60 });
    const lightAgent = new Agent({ keepAlive: true });
    // Open the connections first, so that the load below arrives at once.
    await Promise.all([...Array.from({ length: 60 }, () => create(port, heavyAgent, TOKEN_A, 1)), create(port, lightAgent, TOKEN_B, 1)]);

    const answered: string[] = [];
    let light: Promise<void> | undefined;
    const heavy = Array.from({ length: 60 }, (_, i) =>
      create(port, heavyAgent, TOKEN_A, 20).then((status) => {
        expect(status).toBe(201);
        answered.push(`a${i}`);
        // Client B asks once client A's load is being served: without turns it would wait for every request of A read before it.
        light ??= create(port, lightAgent, TOKEN_B, 1).then((status) => {
          expect(status).toBe(201);
          answered.push('b');
        });
      }),
    );
    await Promise.all(heavy);
    await light;
    heavyAgent.destroy();
    lightAgent.destroy();
    expect(answered).toHaveLength(61);
    // Measured: 15th or 16th with turns, last (60th) without.
    expect(answered.indexOf('b'), answered.join(' ')).toBeLessThan(30);
  });
});
