import { areaOf } from '../coverage/index.js';
import type { Fixtures } from '../fixtures/index.js';
import type { Order } from '../records/index.js';
import { quoteService, type RateRequest } from './quote.js';
import { chargeableWeight } from './weight.js';

/** What an order costs, by the same formula as GET /v1/rates/shipping-fee. */
export interface OrderRate {
  chargeable_kg: number;
  shipping_fee: number;
  insurance_fee: number;
  cod_fee: number;
  total_fee: number;
}

const num = (text: string | undefined): number => Number(text ?? '0');

/** The rate request an order's item makes (its areas, weight, dimensions, value, insurance, COD). */
export function rateRequestOf(fixtures: Fixtures, order: Order): RateRequest | undefined {
  const origin = areaOf(fixtures, order.sender.sender_addr_id);
  const destination = areaOf(fixtures, order.item.receiver_addr_id);
  if (!origin || !destination) return undefined;
  const { item } = order;
  return {
    origin,
    destination,
    weight_kg: num(item.item_weight),
    dimensions: { length: num(item.item_length), width: num(item.item_width), height: num(item.item_height) },
    item_value: num(item.item_value),
    insurance: item.insurance === '1',
    cod: num(item.cod),
  };
}

/** The price of an order's courier service, or null when its areas or service are no longer known. */
export function orderRate(fixtures: Fixtures, order: Order): OrderRate | null {
  const request = rateRequestOf(fixtures, order);
  const service = fixtures.couriers.get(order.courier_code)?.services.find((s) => s.code === order.item.service_code);
  if (!request || !service) return null;
  const weight = chargeableWeight(request.weight_kg, request.dimensions);
  const quote = quoteService(service, request, weight);
  return {
    chargeable_kg: weight.chargeable_kg,
    shipping_fee: quote.shipping_fee,
    insurance_fee: quote.insurance_fee,
    cod_fee: quote.cod_fee,
    total_fee: quote.total_fee,
  };
}
