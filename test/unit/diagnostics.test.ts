import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { fieldOf, toFieldErrors } from '../../src/spec/diagnostics.js';

describe('fieldOf', () => {
  it.each([
    ['', 'body'], ['/items/1/item_weight', 'items[1].item_weight'], ['/sender_name', 'sender_name'], ['/a~1b', 'a/b'], ['/0', '[0]'],
  ])('names %j as %s', (path, field) => expect(fieldOf(path)).toBe(field));

  it('puts a prefix before the field', () => expect(fieldOf('/x-sandbox-scenario', 'header')).toBe('header.x-sandbox-scenario'));
});

describe('toFieldErrors', () => {
  const ajv = new Ajv2020({ allErrors: true });
  const validate = ajv.compile({
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: { type: 'object', required: ['qty'], properties: { qty: { type: 'string', pattern: '^[0-9]+$' } } } }, n: { type: 'integer' } },
  });

  it('gives one error per field, naming missing fields under their parent', () => {
    validate({ items: [{ qty: 'x' }, {}], n: '1' });
    expect(toFieldErrors(validate.errors)).toEqual([
      { field: 'items[0].qty', message: 'must be numeric text, digits only (for example "12")' },
      { field: 'items[1].qty', message: 'is required' },
      { field: 'n', message: 'must be a JSON integer (for example 1): not text, not a fraction' },
    ]);
  });

  it('speaks of whole numbers, not JSON types, for parameters', () => {
    validate({ items: [], n: 'x' });
    expect(toFieldErrors(validate.errors, '', true)).toEqual([{ field: 'n', message: 'must be a whole number' }]);
  });

  it('says a text parameter given twice must be given once', () => {
    const query = ajv.compile({ type: 'object', properties: { endpoint_id: { type: 'string' } } });
    query({ endpoint_id: ['a', 'b'] });
    expect(toFieldErrors(query.errors, '', true)).toEqual([{ field: 'endpoint_id', message: 'must be given once, as plain text' }]);
  });
});
