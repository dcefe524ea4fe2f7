import { describe, expect, it } from 'vitest';
import type { OperationInput } from '../../src/http/handler.js';
import { compileSpec } from '../../src/spec/compile.js';
import type { OpenApiDocument } from '../../src/spec/load.js';
import { specAnswer } from '../../src/http/spec-answer.js';

/** A spec with two operations no handler knows: one with an example, one with a schema only. */
const document: OpenApiDocument = {
  openapi: '3.1.0',
  jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
  info: { title: 'extra', version: '1' },
  paths: {
    '/v1/couriers': {
      get: {
        operationId: 'listCouriers',
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array' }, examples: { two: { value: [{ code: 'jne' }, { code: 'jnt' }] } } } } },
        },
      },
    },
    '/v1/order/{order_no}/label': {
      get: {
        operationId: 'getLabel',
        parameters: [{ name: 'order_no', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '201': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Label' } } } },
          '404': { description: 'no' },
        },
      },
    },
  },
  components: {
    schemas: {
      Label: {
        type: 'object',
        required: ['awb', 'pages'],
        additionalProperties: false,
        properties: { awb: { allOf: [{ $ref: '#/components/schemas/Digits' }] }, pages: { type: 'integer', minimum: 1, maximum: 3 } },
      },
      Digits: { type: 'string', pattern: '^[0-9]{6}$' },
    },
  },
};
const spec = compileSpec(document, 'extra');

function inputFor(operationId: string, params: Record<string, string> = {}): OperationInput {
  const operation = spec.byId.get(operationId)!;
  const path = `${operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => params[name] ?? '')}`;
  return { operation, client: undefined, method: operation.method.toUpperCase(), path, params, query: {}, headers: {}, body: undefined, baseUrl: 'http://127.0.0.1' };
}

describe('spec answers of operations without a handler (Prism\'s mocker)', () => {
  it('answers with the first documented 2xx example', async () => {
    const reply = await specAnswer(document)(inputFor('listCouriers'));
    expect(reply).toMatchObject({ status: 200, body: [{ code: 'jne' }, { code: 'jnt' }] });
  });

  it('answers with data generated from the schema when there is no example, valid against it', async () => {
    const reply = await specAnswer(document)(inputFor('getLabel', { order_no: '1' }));
    expect(reply).toMatchObject({ status: 201, body: { awb: expect.stringMatching(/^[0-9]{6}$/), pages: expect.any(Number) } });
    if ('body' in reply) expect(spec.byId.get('getLabel')!.validateResponse(201, reply.body)).toEqual([]);
  });

  it('gives the same request the same data, and another request or seed other data', async () => {
    const answer = specAnswer(document, 'seed-1');
    const one = await answer(inputFor('getLabel', { order_no: '1' }));
    expect(await answer(inputFor('getLabel', { order_no: '1' }))).toEqual(one);
    expect(await answer(inputFor('getLabel', { order_no: '2' }))).not.toEqual(one);
    expect(await specAnswer(document, 'seed-2')(inputFor('getLabel', { order_no: '1' }))).not.toEqual(one);
  });
});
