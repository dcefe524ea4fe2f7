import { describe, expect, it } from 'vitest';
import { compileSpec } from '../../src/spec/compile.js';
import { CONTROL_SPEC, deref, loadSpec, PROVIDER_SPEC } from '../../src/spec/load.js';

const document = loadSpec(PROVIDER_SPEC);
/** A named example of an operation's JSON answer with this status. */
const exampleOf = (definition: Record<string, unknown>, status: number, name: string): unknown =>
  (deref(document, (definition.responses as Record<string, unknown>)[String(status)]) as { content: Record<string, { examples: Record<string, { value: unknown }> }> }).content['application/json']!.examples[name]!.value;
const spec = compileSpec(document, 'provider');
const ASSUMED = ['cancelOrder', 'getOrderDetail', 'getEstimationRates', 'listProvinces', 'listCities', 'listDistricts', 'searchArea', 'listCouriers', 'getShippingFee', 'streamShippingFee'];

describe('spec/openapi.yaml: the operations the provider only names', () => {
  it.each(ASSUMED)('%s is marked x-sandbox-assumed, says the provider does not document it, and is secured', (operationId) => {
    const op = spec.byId.get(operationId);
    expect(op, operationId).toBeDefined();
    expect(op!.path.startsWith('/v1/')).toBe(true);
    expect(op!.definition['x-sandbox-assumed']).toBe(true);
    expect(String(op!.definition.description)).toMatch(/provider names[\s\S]*but does not\s+document/);
    expect(op!.secured).toBe(true);
    expect(op!.statuses).toEqual(expect.arrayContaining([200, 401]));
  });

  it.each(ASSUMED)('every JSON example of %s matches its schema', (operationId) => {
    const op = spec.byId.get(operationId)!;
    for (const status of op.statuses) {
      const response = deref(document, (op.definition.responses as Record<string, unknown>)[String(status)]) as { content?: Record<string, { examples?: Record<string, unknown> }> };
      for (const name of Object.keys(response.content?.['application/json']?.examples ?? {})) {
        expect(op.validateResponse(status, exampleOf(op.definition, status, name)), `${operationId} ${status} ${name}`).toEqual([]);
      }
    }
  });

  it('the cancel request example is a valid request', () => {
    const op = spec.byId.get('cancelOrder')!;
    const body = ((op.definition.requestBody as { content: Record<string, { examples: Record<string, { value: unknown }> }> }).content['application/json']!.examples.cancel!).value;
    expect(op.validateRequest({ path: {}, query: {}, headers: {}, body })).toEqual([]);
  });
});

describe('compiling the bundled specs', () => {
  // A sandbox on the bundled specs compiles an operation's request validators at its first request
  // (lazy); here every one is compiled at once, as a start with --spec compiles another spec.
  it.each([
    ['provider', PROVIDER_SPEC],
    ['control', CONTROL_SPEC],
  ])('the %s spec compiles whole, every request validator', (id, file) => {
    const whole = compileSpec(loadSpec(file), id);
    expect(whole.operations.length).toBeGreaterThan(10);
  });

  it('lazily or not, an operation refuses the same request with the same field errors', () => {
    const lazy = compileSpec(loadSpec(PROVIDER_SPEC), 'provider', { lazy: true });
    const request = { path: {}, query: {}, headers: {}, body: { sender: { sender_name: 7 }, items: [] } };
    const problems = spec.byId.get('createOrder')!.validateRequest(structuredClone(request));
    expect(problems.length).toBeGreaterThan(1);
    expect(lazy.byId.get('createOrder')!.validateRequest(structuredClone(request))).toEqual(problems);
    expect(lazy.byId.get('createOrder')!.validateRequest(structuredClone(request))).toEqual(problems);
  });
});

describe('a spec compiled lazily', () => {
  const broken = (change: (schemas: Record<string, Record<string, unknown>>) => void) => {
    const copy = loadSpec(PROVIDER_SPEC);
    change((copy.components as { schemas: Record<string, Record<string, unknown>> }).schemas);
    return copy;
  };

  it('names at start a reference that does not resolve (a bundled spec edited in place), and the operation that needs it fails', () => {
    const document = broken((schemas) => (schemas.CreateOrderRequest!.allOf = [{ $ref: '#/components/schemas/DoesNotExist' }]));
    const lazy = compileSpec(document, 'provider', { lazy: true });
    expect(lazy.unresolved).toEqual(['#/components/schemas/DoesNotExist (from #/components/schemas/CreateOrderRequest/allOf/0)']);
    expect(() => lazy.byId.get('createOrder')!.validateRequest({ path: {}, query: {}, headers: {}, body: {} })).toThrow("can't resolve reference");
  });

  it('names no reference Ajv resolves: a $ref in example data or an x- extension, an anchor, a pointer inside a schema of its own $id, a percent-encoded pointer', () => {
    const document = broken((schemas) => {
      schemas['Foo Bar'] = { type: 'string', $anchor: 'fooBar' };
      schemas.CreateOrderRequest!.examples = [{ $ref: 'not a reference, just data' }];
      schemas.CreateOrderRequest!['x-note'] = { $ref: '#/nope' };
      schemas.Scoped = { $id: 'https://example.test/scoped', $defs: { a: { type: 'string' } }, $ref: '#/$defs/a' };
      schemas.ByAnchor = { $ref: '#fooBar' };
      schemas.Encoded = { $ref: '#/components/schemas/Foo%20Bar' };
    });
    expect(() => compileSpec(structuredClone(document), 'provider')).not.toThrow(); // Ajv, eager, takes it
    expect(compileSpec(document, 'provider', { lazy: true }).unresolved).toEqual([]);
  });

  it('compiles an operation once: a validator that cannot compile fails the same way at every request, without compiling again', () => {
    const document = broken((schemas) => (schemas.CreateOrderRequest!.properties = { ...(schemas.CreateOrderRequest!.properties as object), batch_note: { type: 'string', pattern: '(' } }));
    const op = compileSpec(document, 'provider', { lazy: true }).byId.get('createOrder')!;
    const parts = { path: {}, query: {}, headers: {}, body: {} };
    const thrown = (): unknown => {
      try {
        op.validateRequest(parts);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const first = thrown();
    expect(first).toBeInstanceOf(Error);
    expect(thrown()).toBe(first); // the same error kept, not a second compile's
  });
});
