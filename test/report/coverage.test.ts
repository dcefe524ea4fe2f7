import { readFileSync } from 'node:fs';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { runReport } from '../../src/client/report.js';
import type { Report } from '../../src/report/grade.js';
import { createRequest } from '../support/orders.js';

/** Every operation of spec/openapi.yaml with its documented statuses, read from the file itself. */
const documented: Record<string, number[]> = {};
for (const methods of Object.values(parse(readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8')).paths as Record<string, Record<string, { operationId?: string; responses?: object }>>)) {
  for (const op of Object.values(methods)) if (op.operationId && op.responses) documented[op.operationId] = Object.keys(op.responses).map(Number);
}

const tokens = { a: 'token-cov-a', b: 'token-cov-b' };
let sandbox: Sandbox;

const call = (token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${sandbox.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
const report = async (token: string): Promise<Report> => (await (await call(token, 'GET', '/__sandbox/report')).json()) as Report;
const text = async (token: string, format: string): Promise<string> => (await call(token, 'GET', `/__sandbox/report?format=${format}`)).text();
const statusesOf = (r: Report, operationId: string) => Object.fromEntries(r.coverage.operations.find((op) => op.operation_id === operationId)!.statuses.map((s) => [s.status, s.exercised]));

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runReport(['--url', sandbox.url, ...argv], (t) => void (stdout += t), (t) => void (stderr += t));
  return { code, stdout, stderr };
}

beforeAll(async () => {
  sandbox = await createSandbox({ port: 0, clock: 'manual', seed: 'coverage', logLevel: 'silent', clients: [{ token: tokens.a, id: 'a', couriers: ['jne'] }, { token: tokens.b, id: 'b' }] });
  // Client a exercises only create and tracking: two creates, one bad create, two tracking reads of an unknown AWB.
  for (const body of [createRequest(1), createRequest(2)]) expect((await call(tokens.a, 'POST', '/v1/order', body)).status).toBe(201);
  expect((await call(tokens.a, 'POST', '/v1/order', createRequest(1, { courier_code: 'sicepat' }))).status).toBe(403);
  for (let i = 0; i < 2; i++) expect((await call(tokens.a, 'GET', '/v1/order/tracking/SBXNOSUCH01')).status).toBe(404);
  // Refused for the sandbox's own controls alone (the test's setup, no answer of the provider's): an unknown scenario, a status no operation documents.
  expect((await call(tokens.a, 'POST', '/v1/order', createRequest(1), { 'x-sandbox-scenario': 'bogus' })).status).toBe(400);
  expect((await call(tokens.a, 'GET', '/v1/order/tracking/SBXNOSUCH01?__code=999')).status).toBe(400);
  expect((await call(tokens.a, 'GET', '/v1/order/tracking/SBXNOSUCH01', undefined, { prefer: 'code=418' })).status).toBe(400);
  // Client b reads the couriers, and answers a 503 documented for create through Prefer.
  expect((await call(tokens.b, 'GET', '/v1/couriers')).status).toBe(200);
  expect((await call(tokens.b, 'POST', '/v1/order', createRequest(1), { prefer: 'code=503' })).status).toBe(503);
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('GET /__sandbox/report: coverage of the provider operations', () => {
  it('lists every operation of the provider spec with every documented status, in the spec’s order', async () => {
    const { coverage } = await report(tokens.a);
    expect(Object.fromEntries(coverage.operations.map((op) => [op.operation_id, op.statuses.filter((s) => s.documented).map((s) => s.status)]))).toEqual(documented);
    expect(coverage.summary.operations).toBe(Object.keys(documented).length);
    expect(coverage.summary.statuses).toBe(Object.values(documented).flat().length);
  });

  it('counts how often each status of create and tracking was exercised, and shows every other operation as not exercised', async () => {
    const { coverage } = await report(tokens.a);
    expect(coverage.operations.filter((op) => ['createOrder', 'trackOrder'].includes(op.operation_id)).map((op) => op.exercised)).toEqual([3, 2]);
    expect(statusesOf({ coverage } as Report, 'createOrder')).toEqual({ 201: 2, 400: 0, 401: 0, 403: 1, 413: 0, 415: 0, 503: 0 });
    expect(statusesOf({ coverage } as Report, 'trackOrder')).toEqual({ 200: 0, 400: 0, 401: 0, 404: 2 });
    const others = coverage.operations.filter((op) => !['createOrder', 'trackOrder'].includes(op.operation_id));
    expect(others.length).toBe(10);
    for (const op of others) expect({ op: op.operation_id, exercised: op.exercised, statuses: op.statuses.map((s) => s.exercised) }).toEqual({ op: op.operation_id, exercised: 0, statuses: op.statuses.map(() => 0) });
    expect(coverage.summary).toMatchObject({ operations_exercised: 2, statuses_exercised: 3 });
    expect(coverage.summary.percent).toBe(Math.round((3 / coverage.summary.statuses) * 10_000) / 100);
  });

  it('never counts another client’s requests', async () => {
    const theirs = await report(tokens.b);
    expect(statusesOf(theirs, 'createOrder')).toMatchObject({ 201: 0, 403: 0, 503: 1 });
    expect(statusesOf(theirs, 'listCouriers')).toMatchObject({ 200: 1 });
    expect(statusesOf(theirs, 'trackOrder')[404]).toBe(0);
    expect(statusesOf(await report(tokens.a), 'listCouriers')[200]).toBe(0);
  });

  it('starts again with a new run', async () => {
    expect((await call(tokens.b, 'POST', '/__sandbox/runs', { name: 'fresh' })).status).toBe(201);
    expect((await report(tokens.b)).coverage.summary).toMatchObject({ operations_exercised: 0, statuses_exercised: 0, percent: 0 });
  });

  it('shows the coverage in the JUnit XML (a test case per documented status, skipped when not exercised) and in the HTML page', async () => {
    const json = await report(tokens.a);
    const junit = await text(tokens.a, 'junit');
    expect(XMLValidator.validate(junit)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testcase' || name === 'testsuite' }).parse(junit) as {
      testsuites: { testsuite: Array<{ name: string; testcase: Array<{ classname: string; name: string; skipped?: unknown }> }> };
    };
    const suite = doc.testsuites.testsuite.find((s) => s.name === 'coverage of a')!;
    expect(suite.testcase).toHaveLength(json.coverage.summary.statuses);
    expect(suite.testcase.filter((c) => c.skipped === undefined).map((c) => c.name)).toEqual(['POST /v1/order → 201', 'POST /v1/order → 403', 'GET /v1/order/tracking/{order_no} → 404']);
    const html = await text(tokens.a, 'html');
    expect(html).toContain(`<strong>${json.coverage.summary.percent}%</strong> of documented statuses exercised: 3 of ${json.coverage.summary.statuses}`);
    expect(html).toContain('<code>cancelOrder</code>');
  });
});

describe('shipping-sandbox report --coverage-under', () => {
  it('exits 1 for a run that exercised only create and tracking, saying so, and 0 at or under its coverage', async () => {
    const { percent, statuses, statuses_exercised: exercised } = (await report(tokens.a)).coverage.summary;
    const below = await cli('--token', tokens.a, '--coverage-under', '50');
    expect(below.code).toBe(1);
    expect(below.stderr).toMatch(new RegExp(`${percent}% coverage \\(3 of \\d+ documented statuses .*\\), below --coverage-under 50`));
    expect((JSON.parse(below.stdout) as Report).coverage.summary.percent).toBe(percent);
    // The gate compares the exact share, which the shown percentage rounds: at it (cut to two decimals), it passes.
    expect((await cli('--token', tokens.a, '--coverage-under', String(Math.floor((exercised * 10_000) / statuses) / 100))).code).toBe(0);
    // Beside --fail-under, each judged on its own.
    expect((await cli('--token', tokens.a, '--coverage-under', '50', '--fail-under', '0')).code).toBe(1);
  });

  it('exits 2 naming the flag for a percent that is not one', async () => {
    const bad = await cli('--token', tokens.a, '--coverage-under', 'lots');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--coverage-under.*must be a number from 0 to 100/);
  });
});
