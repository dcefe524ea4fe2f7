import type { Courier } from '../fixtures/index.js';
import type { CourierQuote, RateRequest } from './quote.js';
import { chargeableWeight, type ParcelWeight } from './weight.js';

/** A courier as GET /v1/couriers lists it. */
export function courierView(courier: Courier) {
  return {
    courier_code: courier.code,
    courier_name: courier.name,
    supports_cod: courier.supports_cod,
    services: courier.services.map((s) => ({
      service_code: s.code,
      service_name: s.name,
      description: s.description,
      etd_days_min: s.etd_days[0],
      etd_days_max: s.etd_days[1],
    })),
  };
}

/** The weights of the parcel of a rate request. */
export const weightOf = (request: RateRequest): ParcelWeight => chargeableWeight(request.weight_kg, request.dimensions);

/** The `data` of GET /v1/rates/shipping-fee: the parcel and one quote per courier. */
export function shippingFeeView(request: RateRequest, quotes: CourierQuote[]) {
  return {
    origin: request.origin,
    destination: request.destination,
    weight: weightOf(request),
    currency: 'IDR',
    couriers: quotes,
  };
}

/** The `data` of GET /v1/rates/estimation: one flat entry per available service, cheapest first. */
export function estimationView(quotes: CourierQuote[]) {
  return quotes
    .flatMap((q) =>
      q.services.map((s) => ({
        courier_code: q.courier_code,
        courier_name: q.courier_name,
        service_code: s.service_code,
        service_name: s.service_name,
        etd: s.etd,
        weight: q.chargeable_kg,
        price: s.shipping_fee,
        insurance_fee: s.insurance_fee,
        cod_fee: s.cod_fee,
        total_price: s.total_fee,
      })),
    )
    .sort((a, b) => a.total_price - b.total_price || a.courier_code.localeCompare(b.courier_code) || a.service_code.localeCompare(b.service_code));
}
