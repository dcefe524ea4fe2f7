import type { Client } from '../clients/index.js';
import { assertCourierEnabled } from '../clients/index.js';
import { amountProblem, MAX_AMOUNT, MAX_SIDE_CM, MAX_WEIGHT_KG, RuleViolation, type FieldError } from '../shared/index.js';
import type { Fixtures } from '../fixtures/index.js';
import type { CreateOrderRequest } from '../records/index.js';

/** An item's numeric text fields, each with the largest value the sandbox prices and its unit. */
const AMOUNTS = [
  ['item_weight', MAX_WEIGHT_KG, 'kg'],
  ['item_width', MAX_SIDE_CM, 'cm'],
  ['item_height', MAX_SIDE_CM, 'cm'],
  ['item_length', MAX_SIDE_CM, 'cm'],
  ['item_value', MAX_AMOUNT, ''],
  ['cod', MAX_AMOUNT, ''],
  ['item_qty', MAX_AMOUNT, ''],
] as const;

/**
 * The checks of a create request that the JSON schema cannot express: known courier,
 * service and areas, COD support, the item limit and the couriers the client may use (roles are checked at the HTTP edge).
 * Throws Forbidden, or RuleViolation naming every field at fault.
 */
export function checkCreateRequest(fixtures: Fixtures, client: Client, request: CreateOrderRequest, maxItems: number): void {
  const courier = fixtures.couriers.get(request.courier_code);
  if (!courier) {
    throw new RuleViolation([{ field: 'courier_code', message: `must be one of: ${[...fixtures.couriers.keys()].join(', ')}` }]);
  }
  assertCourierEnabled(client, courier.code, 'courier_code');
  const problems: FieldError[] = [];
  if (request.items.length > maxItems) {
    problems.push({ field: 'items', message: `must hold at most ${maxItems} entries; split the orders into several requests` });
  }
  if (!fixtures.districts.has(request.sender_addr_id)) {
    problems.push({ field: 'sender_addr_id', message: 'is not a district id of the coverage data (see GET /v1/area/search)' });
  }
  request.items.forEach((item, i) => {
    if (!fixtures.districts.has(item.receiver_addr_id)) {
      problems.push({ field: `items[${i}].receiver_addr_id`, message: 'is not a district id of the coverage data (see GET /v1/area/search)' });
    }
    if (!courier.services.some((s) => s.code === item.service_code)) {
      problems.push({
        field: `items[${i}].service_code`,
        message: `is not a service of ${courier.code}; use one of: ${courier.services.map((s) => s.code).join(', ')}`,
      });
    }
    for (const [name, max, unit] of AMOUNTS) {
      const problem = amountProblem(`items[${i}].${name}`, item[name], max, unit);
      if (problem) problems.push(problem);
    }
    if (!courier.supports_cod && Number(item.cod ?? '0') > 0) {
      problems.push({ field: `items[${i}].cod`, message: `${courier.code} does not offer cash on delivery; send "0"` });
    }
  });
  if (problems.length > 0) throw new RuleViolation(problems);
}
