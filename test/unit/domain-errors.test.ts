import { describe, expect, it } from 'vitest';
import { toApiError } from '../../src/http/errors.js';
import { DomainError, NotFound, RuleViolation, TooManyRequests } from '../../src/shared/index.js';

describe('a domain error as an HTTP error', () => {
  it("answers a subclass of a domain error with its ancestor's status, not a 500", () => {
    class OrderNotFound extends NotFound {}
    class CourierRule extends RuleViolation {}
    expect(toApiError(new OrderNotFound()).status).toBe(404);
    const rule = toApiError(new CourierRule([{ field: 'courier_code', message: 'is not allowed' }], 'No.'));
    expect(rule.status).toBe(400);
    expect(rule.errors).toEqual([{ field: 'courier_code', message: 'is not allowed' }]);
    expect(toApiError(new TooManyRequests('Slow down.', 3))).toMatchObject({ status: 429, headers: { 'Retry-After': '3' } });
  });

  it('answers a domain error of no known kind, and anything else, with a 500', () => {
    class Strange extends DomainError {}
    expect(toApiError(new Strange('?')).status).toBe(500);
    expect(toApiError(new Error('bug')).status).toBe(500);
  });
});
