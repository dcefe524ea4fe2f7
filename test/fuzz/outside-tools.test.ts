import $RefParser from '@apidevtools/json-schema-ref-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import Converter from 'openapi-to-postmanv2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';
import { KeepAliveClient, type RawRequest, type RawResponse } from './http-client.js';
import { createProblems, trackingProblems } from './invariants.js';
import { requestFor, type Seeds } from './requests.js';
import { describeRequest } from './support.js';

// What an outside tool sees: the provider spec as the running sandbox serves it, read by Ajv
// (not the sandbox's own validators), and both served specs read by Postman's converter.

/** FUZZ_CONFORMANCE_RUNS for a longer run; FUZZ_SEED to replay another seed. */
const RUNS = Number(process.env.FUZZ_CONFORMANCE_RUNS ?? 3_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_129);
const A = 'conformance-a';
const B = 'conformance-b';
const MAGIC = ['SBXDLV00000001', 'SBXFLD00000002', 'SBXRTS00000003', 'SBXSTK00000004', 'SBXAWF00000005', 'SBXCNL00000006'];
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}
type Document = { paths: Record<string, Record<string, Operation>> };

let sandbox: Sandbox;
let client: KeepAliveClient;
let provider: Document;
const seeds: Seeds = { params: {}, bodies: {} };

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${sandbox.url}${path}`, { method, headers: { authorization: `Bearer ${A}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await res.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  sandbox = await createSandbox({ clock: 'manual', seed: 'conformance', awbDelay: '1m', logLevel: 'silent', clients: [A, B].map((token) => ({ token, id: token })) });
  client = new KeepAliveClient(new URL(sandbox.url));
  // Real orders part way through their journeys, so tracking answers real histories too.
  const orders = (await api('POST', '/v1/order', createRequest(3))).order_numbers as string[];
  await sandbox.clock.advance(30 * 3_600_000);
  const awbs = await Promise.all(orders.map(async (n) => ((await api('GET', `/v1/order/${n}`)).data as { awb: string }).awb));
  seeds.params = { order_no: [...awbs, ...MAGIC, ...orders] };
  // Dereferenced whole (Portman does it too): Ajv then compiles each response schema as it stands.
  provider = (await $RefParser.dereference(await (await fetch(`${sandbox.url}/__sandbox/openapi.json`)).json())) as unknown as Document;
});

afterAll(async () => {
  client?.close();
  await sandbox?.close();
});

/** Ajv's validator of each documented JSON response, by operationId and status. */
function responseValidators(document: Document): Map<string, Map<string, ValidateFunction>> {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const byOperation = new Map<string, Map<string, ValidateFunction>>();
  for (const item of Object.values(document.paths)) {
    for (const op of Object.values(item)) {
      if (!op?.operationId) continue;
      const statuses = new Map<string, ValidateFunction>();
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (schema) statuses.set(status, ajv.compile(schema));
      }
      byOperation.set(op.operationId, statuses);
    }
  }
  return byOperation;
}

/** A well-formed request asking for generated data: a create of 1-5 items, or the tracking of a real or magic AWB. */
const dynamicRequest: fc.Arbitrary<RawRequest> = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 5 }), fc.nat()).map(([items, seed]) => ({
    method: 'POST',
    path: '/v1/order',
    headers: { authorization: `Bearer ${A}`, 'content-type': 'application/json', prefer: `dynamic=true, seed=${seed}` },
    body: Buffer.from(JSON.stringify(createRequest(items))),
  })),
  fc.tuple(fc.constantFrom(...MAGIC, 'SBXNOSUCH0001'), fc.nat(), fc.boolean()).map(([awb, seed, query]) => ({
    method: 'GET',
    path: query ? `/v1/order/tracking/${awb}?__dynamic=true` : `/v1/order/tracking/${awb}`,
    headers: { authorization: `Bearer ${A}`, ...(query ? {} : { prefer: `dynamic=true, seed=${seed}` }) },
  })),
);

/** The operation of the served spec a request is for: its method and its path exactly as the spec writes it. */
function operationAt(document: Document, method: string, path: string): string | undefined {
  let bare: string;
  try {
    bare = decodeURIComponent(path.split('?')[0]!);
  } catch {
    return undefined;
  }
  for (const [template, item] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(bare)) return item[method.toLowerCase()]?.operationId;
  }
  return undefined;
}

function bodyOf(req: RawRequest): unknown {
  try {
    return req.body ? JSON.parse(req.body.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

describe('an outside tool against the served provider spec', () => {
  it(`answers ${RUNS} fuzzed requests, Prefer: dynamic=true among them, each valid against the served schema (Ajv) and the seed's invariants`, async () => {
    const validators = responseValidators(provider);
    const operations = sandbox.services.specs.provider.operations;
    const fuzzed = fc.oneof(
      { arbitrary: dynamicRequest, weight: 4 },
      ...operations.map((op) => ({ arbitrary: requestFor(sandbox.services.specs.provider.document, op, seeds, { own: A, other: B }), weight: 1 })),
    );
    const cases = fc.sample(fuzzed, { seed: SEED, numRuns: RUNS });
    const violations: string[] = [];
    const counts = { dynamic: 0, checked: 0, statuses: new Map<number, number>() };
    const check = (req: RawRequest, res: RawResponse) => {
      counts.statuses.set(res.status, (counts.statuses.get(res.status) ?? 0) + 1);
      const isDynamic = /dynamic=true/i.test(`${req.headers.prefer ?? ''} ${req.path}`);
      if (isDynamic && res.status < 300) counts.dynamic++;
      if (!String(res.headers['content-type'] ?? '').includes('application/json') || req.method === 'HEAD' || res.status === 204) return;
      const body = JSON.parse(res.text) as Record<string, unknown>;
      // A request no documented operation takes (another method, a mutated path) is answered with the envelope.
      const operationId = operationAt(provider, req.method, req.path);
      const validate = operationId ? validators.get(operationId)?.get(String(res.status)) : validators.get('createOrder')!.get('400');
      if (!validate) return void violations.push(`${operationId} answered ${res.status}, which the served spec does not document: ${describeRequest(req)}`);
      counts.checked++;
      if (!validate(body)) violations.push(`${operationId} ${res.status}: ${JSON.stringify(validate.errors).slice(0, 300)} ${describeRequest(req)}`);
      if (res.status === 200 && operationId === 'trackOrder') violations.push(...trackingProblems(body).map((p) => `trackOrder: ${p}`));
      if (res.status === 201 && operationId === 'createOrder') violations.push(...createProblems(body, bodyOf(req)).map((p) => `createOrder: ${p}`));
    };
    // A few at a time, as a tool's runner would send them.
    for (let i = 0; i < cases.length; i += 16) {
      const batch = cases.slice(i, i + 16);
      const answers = await Promise.all(batch.map((req) => client.send(req)));
      batch.forEach((req, j) => check(req, answers[j]!));
    }
    console.log(
      `[conformance] seed ${SEED}: ${cases.length} requests, ${counts.dynamic} generated (dynamic=true) successes, ${counts.checked} JSON answers checked with Ajv, ` +
        `statuses ${[...counts.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}, ${violations.length} violations`,
    );
    const kinds = new Map<string, number>();
    for (const v of violations) kinds.set(v.slice(0, v.indexOf(':')), (kinds.get(v.slice(0, v.indexOf(':'))) ?? 0) + 1);
    expect([...kinds], violations.slice(0, 5).join('\n')).toEqual([]);
    expect(counts.dynamic, 'generated answers among the cases').toBeGreaterThan(RUNS / 6);
  }, 300_000);
});

describe("Postman's converter (what Portman builds on)", () => {
  it.each(['/__sandbox/openapi.json', '/__sandbox/control.openapi.json'])('reads %s as served into a collection', async (path) => {
    const data = await (await fetch(`${sandbox.url}${path}`)).text();
    const result = await new Promise<{ result: boolean; reason?: string; output?: Array<{ type: string; data: { item?: unknown[] } }> }>((resolve, reject) =>
      Converter.convert({ type: 'string', data }, {}, (error, converted) => (error || !converted ? reject(error ?? new Error('no result')) : resolve(converted as never))),
    );
    expect(result.reason).toBeUndefined();
    expect(result.result).toBe(true);
    expect(result.output?.[0]?.type).toBe('collection');
    expect(result.output?.[0]?.data.item?.length).toBeGreaterThan(0);
  });
});
