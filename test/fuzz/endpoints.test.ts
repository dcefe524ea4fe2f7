import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { createRequest } from '../support/orders.js';
import { problemWith } from './answer.js';
import { KeepAliveClient } from './http-client.js';
import { requestFor, type Seeds, type Tokens } from './requests.js';
import { describeRequest, okReceiver } from './support.js';

/** FUZZ_RUNS=50000 for a long run; FUZZ_SEED to replay another seed. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5_600);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_501);
const A = 'fuzz-client-a';
const B = 'fuzz-client-b';
// Fault rules are fuzzed only by these two clients, which send no provider request: no rule the fuzzer creates (hang, dribble, latency) can stall the run.
const F = 'fuzz-faults-f';
const G = 'fuzz-faults-g';
const FAULT_OPS = new Set(['createFaultRule', 'listFaultRules', 'deleteFaultRules', 'deleteFaultRule']);

let dir: string;
let data: string;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof okReceiver>>;
let client: KeepAliveClient;
const seeds: Seeds = { params: {}, bodies: {} };

async function api(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${sandbox.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-fuzz-'));
  data = join(dir, 'sandbox.json');
  receiver = await okReceiver();
  sandbox = await createSandbox({
    data,
    clock: 'manual',
    seed: 'fuzz',
    awbDelay: '1m',
    webhookUrl: receiver.url,
    webhookTimeout: '300ms',
    webhookRetries: '0,1s',
    journalSize: 100,
    logLevel: process.env.FUZZ_LOG ?? 'silent',
    clients: [A, B, F, G].map((token) => ({ token, id: token })),
  });
  client = new KeepAliveClient(new URL(sandbox.url));
  // Real records for the path parameters and bodies, so cases reach the handlers, not only the validators.
  const own = (await api('POST', '/v1/order', A, createRequest(2))).body.order_numbers as string[];
  const other = (await api('POST', '/v1/order', B, createRequest(1))).body.order_numbers as string[];
  await sandbox.clock.advance(120_000);
  const deliveries = (await api('GET', '/__sandbox/webhooks/deliveries', A)).body.deliveries as Array<{ id: string }>;
  const rule = (await api('POST', '/__sandbox/faults', F, { action: { type: 'status', status: 503 } })).body;
  seeds.params = { order_no: [...own, ...other], delivery_id: deliveries.map((d) => d.id), id: [String(rule.id)], file: ['SBXDLV00000001.png', 'x.png'] };
  seeds.bodies = {
    advanceClock: [{ ms: 1000 }, { ms: 0 }],
    setWebhook: [{ url: receiver.url }, { url: receiver.url, chaos: ['duplicate'] }],
    advanceOrder: [{}, { step: 'pickup' }],
    cancelOrder: [{ order_no: own[0] }],
  };
});

afterAll(async () => {
  client?.close();
  await sandbox?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('every provider and control operation under random and mutated requests', () => {
  it(`never answers 5xx, always answers errors with the envelope, keeps answering, and keeps the data file valid (${RUNS} cases, seed ${SEED})`, async () => {
    const operations = [...sandbox.services.specs.provider.operations, ...sandbox.services.specs.control.operations];
    const perOperation = Math.ceil(RUNS / operations.length);
    const statuses = new Map<string, number>();
    const started = Date.now();
    // One seeded property per operation, all at once against the one server (the machine has 2 cores; the server is the bottleneck).
    await Promise.all(
      operations.map(async (op, i) => {
        // Resets go to B (and F), so client A's orders survive to the end and the data file check has records to read.
        const tokens: Tokens = FAULT_OPS.has(op.operationId) ? { own: F, other: G } : op.operationId === 'resetClient' ? { own: B, other: F } : { own: A, other: B };
        const document = op.path.startsWith('/__sandbox') ? sandbox.services.specs.control.document : sandbox.services.specs.provider.document;
        const run = await fc.check(
          fc.asyncProperty(requestFor(document, op, seeds, tokens), async (req) => {
            const res = await client.send(req);
            const key = `${Math.floor(res.status / 100)}xx`;
            statuses.set(key, (statuses.get(key) ?? 0) + 1);
            const problem = problemWith(sandbox.services, req, res);
            if (problem) throw new Error(`${problem}\n  request: ${describeRequest(req)}`);
          }),
          { seed: SEED + i, numRuns: perOperation, endOnFailure: true },
        );
        // fc.assert's report would print the whole counterexample (bodies of megabytes); this keeps what replays it.
        if (run.failed) throw new Error(`${op.operationId}: property failed (seed ${run.seed}, path "${run.counterexamplePath}"): ${String(run.errorInstance).slice(0, 2_000)}`);
      }),
    );
    const health = await fetch(`${sandbox.url}/__sandbox/health`);
    expect(health.status).toBe(200);
    await sandbox.close();
    const file = JSON.parse(readFileSync(data, 'utf8')) as { schema_version?: number };
    expect(file.schema_version).toBeGreaterThanOrEqual(1);
    const reopened = await JournaledFile.open({ path: data });
    const orders = reopened.count('orders');
    await reopened.close();
    const cases = perOperation * operations.length;
    console.log(
      `[fuzz] seed ${SEED}: ${cases} cases over ${operations.length} operations (${perOperation} each), ${client.requests} requests, ` +
        `answers ${[...statuses].sort().map(([k, n]) => `${k} ${n}`).join(', ')}, 5xx 0, dropped connections 0, ` +
        `${receiver.received()} webhooks received, data file valid JSON (${orders} orders, reopened), ${Date.now() - started} ms`,
    );
    expect(statuses.get('5xx')).toBeUndefined();
    expect(cases).toBeGreaterThanOrEqual(RUNS);
  }, 600_000);
});
