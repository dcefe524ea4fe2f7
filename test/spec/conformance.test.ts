import $RefParser from '@apidevtools/json-schema-ref-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { loadFixtures } from '../../src/fixtures/index.js';
import { createRequest } from '../support/orders.js';

// What outside tools (a validating proxy, Portman, code generators) read in the served specs.
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ clock: 'manual', clients: [{ token: 'tok-a', id: 'a' }], rateLimit: 2, maxHeaderSize: 4_096 });
});
afterAll(() => sandbox.close());

type Document = { paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; responses: Record<string, unknown> }>>; security?: unknown[] } & Record<string, unknown>;
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

async function served(path: string): Promise<Document> {
  return (await (await fetch(`${sandbox.url}${path}`)).json()) as Document;
}

function operations(document: Document) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op, secured: (op.security ?? document.security ?? []).length > 0 })),
  );
}

const SPECS = ['/__sandbox/openapi.json', '/__sandbox/control.openapi.json'];

describe.each(SPECS)('GET %s', (path) => {
  it('documents 413, 415 and 431 on every operation, and 429 and 503 (a database out of reach, on PostgreSQL) on every operation that takes a token', async () => {
    const document = await served(path);
    const missing = operations(document).flatMap(({ name, op, secured }) => [
      ...['413', '415', '431'].filter((status) => !op.responses[status]).map((status) => `${name} ${status}`),
      ...(secured ? ['429', '503'].filter((status) => !op.responses[status]).map((status) => `${name} ${status}`) : []),
    ]);
    expect(missing).toEqual([]);
  });

  it('dereferences whole without a circular $ref (Portman stops at one)', async () => {
    const document = await served(path);
    const dereferenced = await $RefParser.dereference(document as never, { dereference: { circular: false } });
    expect(() => JSON.stringify(dereferenced)).not.toThrow();
  });
});

describe('429 and 431 answers are the documented ones', () => {
  it('a client past --rate-limit gets the 429 the spec documents, with Retry-After', async () => {
    const provider = await served('/__sandbox/openapi.json');
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers: { authorization: 'Bearer tok-a', 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) })),
    );
    const refused = answers.find((res) => res.status === 429)!;
    expect(refused, 'a 429 among 4 requests at once with --rate-limit 2').toBeDefined();
    expect(refused.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    const op = sandbox.services.specs.provider.byId.get('createOrder')!;
    expect(op.validateResponse(429, await refused.json())).toEqual([]);
    expect(provider.paths['/v1/order']!.post!.responses['429']).toEqual({ $ref: '#/components/responses/TooManyRequests' });
  });

  it('headers over --max-header-size get the 431 the spec documents', async () => {
    const res = await fetch(`${sandbox.url}/v1/order/tracking/SBXDLV00000001`, { headers: { authorization: 'Bearer tok-a', 'x-note': 'x'.repeat(5_000) } });
    expect(res.status).toBe(431);
    expect(sandbox.services.specs.provider.byId.get('trackOrder')!.validateResponse(431, await res.json())).toEqual([]);
  });
});

describe("the provider's labels", () => {
  it.each(['createOrder', 'trackOrder'])('%s carries the provider status "Developing"', async (operationId) => {
    const document = await served('/__sandbox/openapi.json');
    const op = operations(document).find(({ op }) => op.operationId === operationId)!.op as Record<string, unknown>;
    expect(op['x-provider-status']).toBe('Developing');
    expect(op.description).toContain('Developing');
  });

  it('names every intermediate scan after pick-up from the provider\'s list (loading, sending, arrival, unloading, delivery)', () => {
    const names = new Set(['Loading scan', 'Sending scan', 'Arrival scan', 'Unloading scan', 'Delivery scan']);
    const off: string[] = [];
    let intermediate = 0;
    for (const scenario of loadFixtures().scenarios.values()) {
      const pickup = scenario.steps.findIndex((step) => step.status === '1');
      if (pickup < 0) continue;
      for (const step of scenario.steps.slice(pickup + 1).filter((s) => s.status === null)) {
        intermediate++;
        if (!names.has(step.note)) off.push(`${scenario.name}.${step.key}: "${step.note}"`);
      }
    }
    expect(off).toEqual([]);
    expect(intermediate).toBeGreaterThan(10);
  });
});
