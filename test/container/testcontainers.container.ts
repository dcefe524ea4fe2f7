import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShippingSandboxContainer, type StartedShippingSandboxContainer } from '../../src/client/testcontainers.js';
import { createRequest } from '../support/orders.js';

// Started by scripts/container-test.sh: DOCKER_HOST is podman's socket, TESTCONTAINERS_RYUK_DISABLED
// is true (nothing can be pulled), SANDBOX_IMAGE the image it built from the Dockerfile.
const image = process.env.SANDBOX_IMAGE;
const hooks: Array<{ path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }> = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    hooks.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(body) as Record<string, unknown> });
    res.end();
  });
});

async function until<T>(what: string, probe: () => T | undefined, ms = 30_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const value = probe();
    if (value !== undefined) return value;
  }
  throw new Error(`no ${what} within ${ms} ms`);
}

describe.skipIf(!image || !process.env.DOCKER_HOST)('ShippingSandboxContainer (the Testcontainers module) on the image', () => {
  let sandbox: StartedShippingSandboxContainer;
  let port: number;

  beforeAll(async () => {
    receiver.listen(0, '0.0.0.0');
    await once(receiver, 'listening');
    port = (receiver.address() as AddressInfo).port;
    // The receiver in this process, reached from the container as podman's host.containers.internal
    // through SANDBOX_WEBHOOK_URL (operator-configured, so trusted by the target policy).
    sandbox = await new ShippingSandboxContainer(image, {
      tokens: ['tc-token', 'tc-other'],
      seed: 'tc',
      awbDelay: '5s',
      webhookUrl: `http://host.containers.internal:${port}/hooks/default`,
      logLevel: 'warn',
    }).start();
  });
  afterAll(async () => {
    await sandbox?.stop();
    receiver.close();
  });

  it('waited on the health endpoint: the sandbox answers at the base URL with the token it was given', async () => {
    expect(sandbox.getToken()).toBe('tc-token');
    expect(sandbox.getBaseUrl()).toMatch(/^http:\/\/[^/]+:\d+$/);
    const health = await fetch(`${sandbox.getBaseUrl()}/__sandbox/health`);
    expect(health.status).toBe(200);
    expect(((await sandbox.request('GET', '/__sandbox/orders')).status)).toBe(200);
  });

  it('creates an order, delivers its AWB webhook to a receiver in the test process once the clock moves on, and tracks it', async () => {
    const created = await sandbox.request<{ order_numbers: string[] }>('POST', '/v1/order', createRequest(1));
    expect(created.status).toBe(201);
    const orderNo = created.body.order_numbers[0]!;
    expect(hooks.filter((h) => h.body.order_no === orderNo)).toEqual([]);

    await sandbox.advanceClock(5_000);
    const hook = await until('AWB webhook', () => hooks.find((h) => h.body.order_no === orderNo && h.body.event === 'awb.generated'));
    expect(hook.path).toBe('/hooks/default');
    expect(hook.headers['webhook-signature']).toMatch(/^v1,/);
    const awb = hook.body.awb as string;

    await sandbox.advanceClock(24 * 60 * 60_000);
    const tracking = await sandbox.request<{ last_status: string; history: Array<{ note: string }> }>('GET', `/v1/order/tracking/${awb}`);
    expect(tracking.status).toBe(200);
    expect(tracking.body.history.map((h) => h.note)).toContain('Pick up scan');
  });

  it("admits a receiver on the test host set through the API, by the module's target policy (the image's own is public)", async () => {
    const url = `http://host.containers.internal:${port}/hooks/api`;
    const set = await sandbox.request('PUT', '/__sandbox/webhook', { url }, 'tc-other');
    expect(set.status).toBe(200);
    const created = await sandbox.request<{ order_numbers: string[] }>('POST', '/v1/order', createRequest(1), 'tc-other');
    await sandbox.advanceClock(5_000, 'tc-other');
    const hook = await until('AWB webhook through the API URL', () => hooks.find((h) => h.body.order_no === created.body.order_numbers[0]));
    expect(hook.path).toBe('/hooks/api');
  });

  it('has the CLI on the PATH for a job without Node: shipping-sandbox report gates inside the container', async () => {
    const gated = await sandbox.exec(['shipping-sandbox', 'report', '--url', 'http://127.0.0.1:4010', '--token', 'tc-token', '--require', 'check.valid']);
    expect(gated.exitCode).toBe(1);
    expect(gated.stderr).toMatch(/check\.valid is required \(--require\)/);
  });

  it('answers a report that is not JSON (JUnit) as its text', async () => {
    const junit = await sandbox.request<string>('GET', '/__sandbox/report?format=junit');
    expect(junit.status).toBe(200);
    expect(junit.body).toMatch(/^<\?xml/);
  });

  it('gives the readiness report and resets the client', async () => {
    const report = await sandbox.readinessReport();
    expect(report.summary.graded).toBeGreaterThan(0);
    const reset = await sandbox.reset();
    expect(reset.removed.orders).toBeGreaterThan(0);
    expect((await sandbox.request<{ total: number }>('GET', '/__sandbox/orders')).body.total).toBe(0);
  });
});

describe.skipIf(!image || !process.env.DOCKER_HOST)('ShippingSandboxContainer on the image, a start the sandbox refuses', () => {
  it("fails start() soon after the container exits, with the sandbox's own message, not after the 60 s startup timeout", async () => {
    const started = Date.now();
    const failure = await new ShippingSandboxContainer(image, { clock: 'real', clockStart: '2026-01-01T00:00:00Z' })
      .start()
      .then(async (sandbox) => {
        await sandbox.stop();
        throw new Error('the sandbox started with a clock start on a real clock');
      })
      .catch((error: Error) => error);
    expect(failure.message).toMatch(/^The sandbox container exited with code 1 before \/__sandbox\/health answered 200\. Its last log lines:\n/);
    expect(failure.message).toMatch(/SANDBOX_CLOCK_START \(--clock-start\) is invalid/);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
