import { describe, expect, it } from 'vitest';
import { globMatches, isFieldPath, valueAt } from '../../src/faults/match.js';

describe('globMatches', () => {
  it.each([
    ['/v1/order', '/v1/order', true],
    ['/v1/order', '/v1/order/', true],
    ['/v1/order', '/v1/orders', false],
    ['/v1/order/tracking/*', '/v1/order/tracking/SBX-1', true],
    ['/v1/order/tracking/*', '/v1/order/tracking/a/b', false],
    ['/v1/**', '/v1/order/tracking/a', true],
    ['/v1/order/tracking/SBX?', '/v1/order/tracking/SBX1', true],
    ['/v1/rates/shipping-fee.json', '/v1/rates/shipping-feexjson', false],
    ['/v1/**/tracking/*', '/v1/order/tracking/A1', true],
    ['/v1/**', '/v1', true],
    ['/v1/*/cancel', '/v1/order/cancel', true],
    ['/v1/o*r', '/v1/order', true],
    ['/v1/o*r', '/v1/orders', false],
  ])('%s against %s is %s', (glob, path, expected) => {
    expect(globMatches(glob, path)).toBe(expected);
  });

  it('answers at once for a glob built to make a regular expression backtrack', () => {
    const started = performance.now();
    expect(globMatches(`/${'**/a*'.repeat(40)}b`, `/${'a/'.repeat(2000)}c`)).toBe(false);
    expect(globMatches(`/${'a*'.repeat(200)}b`, `/${'a'.repeat(5000)}`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('valueAt', () => {
  const body = { courier_code: 'jne', items: [{ cod: '0' }, { cod: '5000', tags: ['a'] }] };
  it.each([
    ['courier_code', 'jne'],
    ['items[1].cod', '5000'],
    ['items[1].tags[0]', 'a'],
    ['items[2].cod', undefined],
    ['courier_code.x', undefined],
  ])('%s is %j', (path, expected) => {
    expect(valueAt(body, path)).toEqual(expected);
  });

  it.each([['items[0].cod', true], ['a.b', true], ['items[x]', false], ['.a', false], ['a..b', false]])('%s is a field path: %s', (path, expected) => {
    expect(isFieldPath(path)).toBe(expected);
  });
});
