import { describe, expect, it } from 'vitest';
import { coverageOf, operationCountKey } from '../../src/report/index.js';

const operations = [
  { operationId: 'createOrder', method: 'post', path: '/v1/order', statuses: [201, 400] },
  { operationId: 'listCouriers', method: 'get', path: '/v1/couriers', statuses: [200] },
];

describe('coverageOf', () => {
  it('shows a status the spec does not document after the documented ones, outside the percent', () => {
    const counts = { [operationCountKey('createOrder', 201)]: 3, [operationCountKey('createOrder', 500)]: 2, 'op.create-order:exercised': 3 };
    const coverage = coverageOf(operations, counts);
    expect(coverage.operations[0]).toEqual({
      operation_id: 'createOrder',
      method: 'POST',
      path: '/v1/order',
      exercised: 5,
      statuses: [
        { status: 201, documented: true, exercised: 3 },
        { status: 400, documented: true, exercised: 0 },
        { status: 500, documented: false, exercised: 2 },
      ],
    });
    expect(coverage.summary).toEqual({ operations: 2, operations_exercised: 1, statuses: 3, statuses_exercised: 1, percent: 33.33 });
  });

  it('is 0 % of a spec without operations, not a division by zero', () => {
    expect(coverageOf([], {}).summary.percent).toBe(0);
  });
});
