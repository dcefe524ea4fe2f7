import { describe, expect, it } from 'vitest';
import { dataOf, storable, storableJson } from '../../src/store/postgres/rows.js';

// What PostgreSQL's jsonb is sent for a batch of journal entries or report observations.
describe('storableJson', () => {
  const values: Array<[string, unknown]> = [
    ['plain values', { a: 1, b: 'text', c: [true, null, 2.5], d: { e: 'é 🚚' } }],
    ['a NUL in a value', { name: 'Bu\u0000di' }],
    ['a NUL in a key', { ['ke\u0000y']: 1 }],
    ['half a surrogate pair, high', ['Toko \ud800 Maju']],
    ['half a surrogate pair, low, deep down', { a: [{ b: 'x\udc00' }] }],
    ['a backslash before u0000 as text', { path: 'C:\\u0000' }],
    ['undefined members', { a: undefined, b: 1 }],
    ['a key __proto__ of a client body', JSON.parse('{"__proto__":{"x":1},"a":2}')],
  ];

  it.each(values)('writes %s as the storable value would be written', (_name, value) => {
    expect(storableJson(value)).toBe(JSON.stringify(storable(value)));
  });

  it('leaves no NUL and no half of a surrogate pair in what it writes', () => {
    const text = storableJson({ ['k\u0000']: ['a\u0000', 'b\ud800', '\udfffc'] });
    expect(text).not.toMatch(/\\u0000|\\ud[89a-f]/i);
    expect(JSON.parse(text)).toEqual({ 'k\uFFFD': ['a\uFFFD', 'b\uFFFD', '\uFFFDc'] });
  });

  it("keeps a client body's key __proto__ whether or not the batch holds a NUL", () => {
    const body = JSON.parse('{"__proto__":{"x":1},"a":"\\u0000"}') as unknown;
    expect(JSON.parse(storableJson(body))).toEqual(JSON.parse('{"__proto__":{"x":1},"a":"\uFFFD"}'));
    expect(storableJson(body)).toContain('"__proto__":{"x":1}');
  });

  it('keeps a whole surrogate pair (an emoji) as it is', () => {
    expect(JSON.parse(storableJson({ s: 'kirim 📦' }))).toEqual({ s: 'kirim 📦' });
  });
});

// What a record's `data` column is sent: its JSON text, and the record the port gives back.
describe('dataOf', () => {
  it('writes a record without its version, once, and copies nothing of a record that can be stored as it is', () => {
    const record = { order_no: '51', version: 3, item: { name: 'Sepatu 👟', tags: ['a'] } };
    const { data, json } = dataOf(record);
    expect(json).toBe(JSON.stringify({ order_no: '51', item: record.item }));
    expect(data).toEqual({ order_no: '51', item: record.item });
    expect(data.item).toBe(record.item);
  });

  it('stores a record with a NUL or half a surrogate pair as the storable value, its text and the record given back alike', () => {
    const record = { order_no: '52', version: 1, item: { name: 'Bu\u0000di', note: ['x\ud800'] }, ['k\u0000']: 1 };
    const { data, json } = dataOf(record);
    const clean = { order_no: '52', item: { name: 'Bu\uFFFDdi', note: ['x\uFFFD'] }, 'k\uFFFD': 1 };
    expect(data).toEqual(clean);
    expect(JSON.parse(json)).toEqual(clean);
    expect(json).not.toMatch(/\\u0000|\\ud[89a-f]/i);
  });

  it("keeps a client body's key __proto__ as a key of the record and of its text", () => {
    const record = { version: 1, body: JSON.parse('{"__proto__":{"x":1},"a":2}') as unknown };
    const { data, json } = dataOf(record);
    expect(json).toBe('{"body":{"__proto__":{"x":1},"a":2}}');
    expect(Object.keys(data.body as object)).toEqual(['__proto__', 'a']);
  });
});
