import { describe, expect, it } from 'vitest';
import { probeBody } from '../../src/faults/body-probe.js';

describe('the body a fault rule\'s criteria describe', () => {
  it('puts each value at its path, the entries before an index as empty objects', () => {
    expect(probeBody({ courier_code: 'jne', 'items[1].cod': '0', 'items[1].order_code': 'A' })).toEqual({ courier_code: 'jne', items: [{}, { cod: '0', order_code: 'A' }] });
  });

  it('puts a value past the 128 items validation lists at the last of them', () => {
    expect(probeBody({ 'items[99999999999].cod': '0' })!.items).toEqual([...Array.from({ length: 127 }, () => ({})), { cod: '0' }]);
    expect(probeBody({ 'items[128].cod': '0', 'items[129].cod': '1' })).toBeUndefined();
  });

  it('takes __proto__ as a field, never as the prototype', () => {
    const body = probeBody(JSON.parse('{"__proto__": {"x": 1}}'))!;
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(Object.hasOwn(body, '__proto__')).toBe(true);
  });

  it.each([
    ['one value where another goes on into it', { items: 1, 'items[0].cod': '0' }],
    ['the same field twice by two spellings', { 'items[0]': {}, 'items[0].cod': '0' }],
    ['an index where a name is', { 'items.cod': '0', 'items[0].cod': '1' }],
    ['a path deeper than a request may be', { [`items${'[0]'.repeat(65)}`]: '0' }],
    ['more entries than a probe builds (a hostile rule: 127 empty items at each of 20 levels)', { [`items${'[127]'.repeat(20)}`]: '0' }],
    ['more criteria than a probe builds', Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, 0]))],
  ])('gives none for %s', (_what, criteria) => {
    expect(probeBody(criteria)).toBeUndefined();
  });
});

describe('the probe and the rule', () => {
  it("never changes the criteria's values", () => {
    const criteria = { 'items[0]': { cod: '0' } };
    probeBody(criteria)!;
    expect(criteria).toEqual({ 'items[0]': { cod: '0' } });
    expect(probeBody(criteria)!.items).not.toBe(undefined);
    expect((probeBody(criteria)!.items as unknown[])[0]).not.toBe(criteria['items[0]']);
  });
});
