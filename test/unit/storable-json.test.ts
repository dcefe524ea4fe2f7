import { describe, expect, it } from 'vitest';
import { storable, storableJson } from '../../src/store/postgres/rows.js';

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
