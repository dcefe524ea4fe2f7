import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { CreateOrderRequest, OrderItem } from '../../src/records/order.js';

const spec = parse(readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8'));

/** The create request example of spec/openapi.yaml, as a fresh copy. */
export function specExample(): CreateOrderRequest {
  return structuredClone(spec.paths['/v1/order'].post.requestBody.content['application/json'].examples.twoParcels.value);
}

/** A valid item; override fields as needed. */
export function item(overrides: Partial<OrderItem> = {}): OrderItem {
  return { ...specExample().items[0]!, ...overrides };
}

/** A valid create request with `count` items. */
export function createRequest(count = 1, overrides: Partial<CreateOrderRequest> = {}): CreateOrderRequest {
  const base = specExample();
  return { ...base, items: Array.from({ length: count }, (_, i) => item({ order_code: `INV-${i + 1}` })), ...overrides };
}
