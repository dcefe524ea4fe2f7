import { describe, expect, it } from 'vitest';
import { globToRegExp, isFieldPath, valueAt } from '../../src/faults/match.js';

describe('globToRegExp', () => {
  it.each([
    ['/v1/order', '/v1/order', true],
    ['/v1/order', '/v1/order/', true],
    ['/v1/order', '/v1/orders', false],
    ['/v1/order/tracking/*', '/v1/order/tracking/SBX-1', true],
    ['/v1/order/tracking/*', '/v1/order/tracking/a/b', false],
    ['/v1/**', '/v1/order/tracking/a', true],
    ['/v1/order/tracking/SBX?', '/v1/order/tracking/SBX1', true],
    ['/v1/rates/shipping-fee.json', '/v1/rates/shipping-feexjson', false],
  ])('%s against %s is %s', (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
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
