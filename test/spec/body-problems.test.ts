import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../src/config/index.js';
import { compiledSpecs, compileSpec, PROVIDER_SPEC } from '../../src/spec/index.js';
import { createRequest } from '../support/orders.js';

const createOrder = compiledSpecs(PROVIDER_SPEC, 100, resolveOptions({})).provider.byId.get('createOrder')!;
const emptyItems = (count: number) => ({ ...createRequest(1), items: Array.from({ length: count }, () => ({})) });

describe("a body's problems are listed in time that grows with its size, not with the square of its errors", () => {
  it('lists the problems of 100,000 empty items at once (listing each item took minutes)', () => {
    const began = performance.now();
    const problems = createOrder.validateBody(emptyItems(100_000));
    expect(problems).toContainEqual({ field: 'items', message: 'must hold at most 100 entries' });
    expect(problems).toContainEqual(expect.objectContaining({ field: 'items[0].order_code' }));
    // Only the first items of a cut array are listed: nothing past them.
    expect(problems.some((p) => /^items\[(\d{4,})\]/.test(p.field))).toBe(false);
    expect(performance.now() - began).toBeLessThan(10_000);
  });

  it('lists every problem of a body within the bounds, as before', () => {
    const body = createRequest(3);
    (body.items[1] as unknown as Record<string, unknown>).item_qty = 'two';
    delete (body.items[2] as unknown as Record<string, unknown>).order_code;
    expect(createOrder.validateBody(body)).toEqual([
      expect.objectContaining({ field: 'items[1].item_qty' }),
      expect.objectContaining({ field: 'items[2].order_code' }),
    ]);
    expect(createOrder.validateBody(createRequest(3))).toEqual([]);
  });

  it('names an array past its maxItems even when its first items have problems of their own', () => {
    const problems = createOrder.validateBody(emptyItems(500));
    expect(problems[0]).toEqual({ field: 'items', message: 'must hold at most 100 entries' });
  });

  it('does not blame a cut array for what the cut did: a long list past a custom minItems, with a wrong item', () => {
    const spec = compileSpec({
      openapi: '3.1.0',
      info: { title: 'custom', version: '1' },
      paths: { '/list': { post: { operationId: 'postList', requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { list: { type: 'array', minItems: 200, items: { type: 'integer' } } } } } } }, responses: { '200': { description: 'ok' } } } } },
    });
    const list: unknown[] = Array.from({ length: 300 }, (_, i) => i);
    list[5] = 'five';
    const problems = spec.byId.get('postList')!.validateBody({ list });
    expect(problems).toEqual([expect.objectContaining({ field: 'list[5]' })]);
  });
});
