import { describe, expect, it } from 'vitest';
import { globMatches, globReaches, unmatchableCriteria } from '../../src/shared/index.js';

const OPERATIONS = [
  { operationId: 'createOrder', method: 'POST', path: '/v1/order' },
  { operationId: 'trackOrder', method: 'GET', path: '/v1/order/tracking/{order_no}' },
  { operationId: 'getLabel', method: 'GET', path: '/v1/labels/{awb}.pdf' },
];

describe('globReaches: whether some request path of a spec path matches a glob', () => {
  it.each([
    ['/v1/order', '/v1/order'],
    ['/v1/order/tracking/*', '/v1/order/tracking/{order_no}'],
    ['/v1/order/tracking/SBX1', '/v1/order/tracking/{order_no}'],
    ['/v1/**', '/v1/order/tracking/{order_no}'],
    ['/**', '/v1/order'],
    ['/v1/*/tracking/?*', '/v1/order/tracking/{order_no}'],
    // A parameter inside a segment (a --spec's path): any text in its place.
    ['/v1/labels/SBX1.pdf', '/v1/labels/{awb}.pdf'],
    ['/v1/labels/SBX1*', '/v1/labels/{awb}.pdf'],
  ])('%s reaches %s', (glob, template) => {
    expect(globReaches(glob, template)).toBe(true);
  });

  it('reaches a parameter segment only with text its pattern takes, percent-decoded as the router decodes it', () => {
    const digits = { order_no: '^[0-9]+$' };
    expect(globReaches('/v1/order/12', '/v1/order/{order_no}', digits)).toBe(true);
    expect(globReaches('/v1/order/%31%32', '/v1/order/{order_no}', digits)).toBe(true);
    expect(globReaches('/v1/order/abc', '/v1/order/{order_no}', digits)).toBe(false);
    // A wildcard segment reaches it only when the parameter's characters can spell the rest.
    expect(globReaches('/v1/order/1*', '/v1/order/{order_no}', digits)).toBe(true);
    expect(globReaches('/v1/order/?*', '/v1/order/{order_no}', digits)).toBe(true);
    expect(globReaches('/v1/order/a*', '/v1/order/{order_no}', digits)).toBe(false);
    expect(globReaches('/v1/order/.*', '/v1/order/{order_no}', digits)).toBe(false);
    const awb = { order_no: '^[A-Za-z0-9-]+$' };
    expect(globReaches('/v1/order/tracking/SBX-*', '/v1/order/tracking/{order_no}', awb)).toBe(true);
    expect(globReaches('/v1/order/tracking/.*', '/v1/order/tracking/{order_no}', awb)).toBe(false);
    expect(globReaches('/v1/order/tracking/(*)', '/v1/order/tracking/{order_no}', awb)).toBe(false);
    // A pattern of another shape is not guessed at: any wildcard segment reaches it.
    expect(globReaches('/v1/x/.*', '/v1/x/{id}', { id: '^(default|ep_[a-z]+)$' })).toBe(true);
    // A malformed escape cannot be decoded: the segment is taken as meeting the pattern (no rule is refused on a guess).
    expect(globReaches('/v1/order/%zz', '/v1/order/{order_no}', digits)).toBe(true);
  });

  it.each([
    ['/v1/orders', '/v1/order'],
    ['/v1/order/tracking', '/v1/order/tracking/{order_no}'],
    ['/v1/labels/SBX1.png', '/v1/labels/{awb}.pdf'],
    ['/v1/order/tracking/*/x', '/v1/order/tracking/{order_no}'],
  ])('%s does not reach %s', (glob, template) => {
    expect(globReaches(glob, template)).toBe(false);
  });

  it("reaches a spec path that ends in a slash (a --spec's) as the matcher does, which drops the request path's trailing slash", () => {
    expect(globReaches('/v1/*', '/v1/couriers/')).toBe(true);
    expect(globReaches('/v1/couriers', '/v1/couriers/')).toBe(true);
    expect(globMatches('/v1/*', '/v1/couriers/')).toBe(true);
    expect(unmatchableCriteria({ operation_id: 'listCouriers', path: '/v1/*' }, [{ operationId: 'listCouriers', method: 'GET', path: '/v1/couriers/' }])).toEqual([]);
  });

  it('agrees with the matcher on the requests it reaches', () => {
    expect(globMatches('/v1/labels/SBX1*', '/v1/labels/SBX1234.pdf')).toBe(true);
    expect(globMatches('/v1/order/tracking/*', '/v1/order/tracking/JN0000000001')).toBe(true);
  });
});

describe('unmatchableCriteria', () => {
  it('takes HEAD where an operation takes GET (a HEAD is answered by it, and journaled as HEAD)', () => {
    expect(unmatchableCriteria({ method: 'head' }, OPERATIONS)).toEqual([]);
    expect(unmatchableCriteria({ method: 'HEAD' }, [OPERATIONS[0]!])).toEqual([{ field: 'method', message: 'no operation of the provider spec takes HEAD; use one of POST' }]);
  });

  it('refuses a path that no request path can match: a trailing slash, a spec parameter written as it is', () => {
    expect(unmatchableCriteria({ path: '/v1/order/' }, OPERATIONS, 'match.')).toEqual([{ field: 'match.path', message: 'ends with "/": a request path is matched without its trailing slash; write /v1/order' }]);
    expect(globMatches('/v1/order/', '/v1/order')).toBe(false);
    expect(unmatchableCriteria({ path: '/v1/order/tracking/{order_no}' }, OPERATIONS)[0]).toMatchObject({ field: 'path', message: expect.stringMatching(/^holds \{order_no\}, a parameter of the spec's path/) });
    expect(globMatches('/v1/order/tracking/{order_no}', '/v1/order/tracking/JN0000000001')).toBe(false);
  });

  it('refuses criteria that each match some operation but no one operation together, naming every one at odds with a named operation', () => {
    expect(unmatchableCriteria({ operation_id: 'createOrder', method: 'GET' }, OPERATIONS, 'match.')).toEqual([
      { field: 'match.method', message: 'is not the method of createOrder (POST /v1/order): no request of it is a GET; leave method out, or name the operation that takes it' },
    ]);
    expect(unmatchableCriteria({ operation_id: 'trackOrder', path: '/v1/labels/*' }, OPERATIONS)).toEqual([
      { field: 'path', message: 'does not reach the path of trackOrder (GET /v1/order/tracking/{order_no}): no request of it matches; leave path out, or write a glob that reaches it' },
    ]);
    // Both at odds: both named, so that dropping one does not meet a second 400.
    expect(unmatchableCriteria({ operation_id: 'createOrder', method: 'GET', path: '/v1/order/tracking/*' }, OPERATIONS).map((e) => e.field)).toEqual(['method', 'path']);
    // The method alone at odds: leaving it out leaves criteria one operation meets.
    expect(unmatchableCriteria({ operation_id: 'createOrder', method: 'GET', path: '/v1/order' }, OPERATIONS).map((e) => e.field)).toEqual(['method']);
    expect(unmatchableCriteria({ operation_id: 'createOrder', path: '/v1/order' }, OPERATIONS)).toEqual([]);
    expect(unmatchableCriteria({ method: 'POST', path: '/v1/labels/*' }, OPERATIONS)).toEqual([{ field: 'method', message: 'is not taken at the paths /v1/labels/* reaches, which take GET: no request meets both' }]);
  });

  it('takes criteria one operation meets together (HEAD of a GET operation among them)', () => {
    expect(unmatchableCriteria({ operation_id: 'trackOrder', method: 'head', path: '/v1/order/tracking/*' }, OPERATIONS)).toEqual([]);
    expect(unmatchableCriteria({ method: 'GET', path: '/v1/**' }, OPERATIONS)).toEqual([]);
    expect(unmatchableCriteria({ operation_id: 'createOrder', method: 'post', path: '/**' }, OPERATIONS)).toEqual([]);
  });

  it('checks nothing against a spec it could not read (no operations)', () => {
    expect(unmatchableCriteria({ operation_id: 'anything', method: 'FETCH', path: '/nowhere' }, [])).toEqual([]);
  });
});
