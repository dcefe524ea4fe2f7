import type { Fixtures } from '../../fixtures/index.js';
import type { OrdersService } from '../../orders/index.js';
import { ESTIMATION_PARAMS, readRateQuery, SHIPPING_FEE_PARAMS } from '../../rates/index.js';
import type { CreateOrderRequest } from '../../records/index.js';
import { clientOf, type OperationInput } from '../handler.js';
import { checkChaosHeader } from './webhooks.js';

/** An operation's checks of a request beyond its schema: throws the error its handler would answer, stores nothing. */
export type RequestCheck = (input: OperationInput) => void;

/**
 * The checks the provider operations' handlers make of a request beyond its schema (a
 * known courier, service and areas, amounts, the couriers the client may use, the
 * scenario and webhook chaos asked for), by operationId. A preferred answer (`Prefer`)
 * runs them first, so that a request its operation would refuse never gets a canned one.
 */
export function providerChecks({ orders, fixtures }: { orders: OrdersService; fixtures: Fixtures }): Record<string, RequestCheck> {
  return {
    createOrder: (input) => {
      checkChaosHeader(input);
      const scenario = input.headers['x-sandbox-scenario'];
      orders.check(clientOf(input), input.body as CreateOrderRequest, { scenario: typeof scenario === 'string' ? scenario : undefined });
    },
    getShippingFee: (input) => void readRateQuery(fixtures, clientOf(input), input.query, SHIPPING_FEE_PARAMS),
    streamShippingFee: (input) => void readRateQuery(fixtures, clientOf(input), input.query, SHIPPING_FEE_PARAMS),
    getEstimationRates: (input) => void readRateQuery(fixtures, clientOf(input), input.query, ESTIMATION_PARAMS),
  };
}
