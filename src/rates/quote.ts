import type { AreaView } from '../coverage/index.js';
import type { Courier, CourierService } from '../fixtures/index.js';
import { roundFee, TARIFF } from './tariff.js';
import { chargeableWeight, type Dimensions, type ParcelWeight } from './weight.js';

/** What a price is asked for: a parcel between two districts. */
export interface RateRequest {
  origin: AreaView;
  destination: AreaView;
  weight_kg: number;
  dimensions: Dimensions;
  item_value: number;
  insurance: boolean;
  cod: number;
}

/** The price of one service of a courier. Fees are whole rupiah. */
export interface ServiceQuote {
  service_code: string;
  service_name: string;
  description: string;
  etd_days_min: number;
  etd_days_max: number;
  /** e.g. "2-3 days" or "1 day". */
  etd: string;
  shipping_fee: number;
  insurance_fee: number;
  cod_fee: number;
  total_fee: number;
}

/** The prices of one courier; `available: false` with a reason when it cannot carry the parcel. */
export interface CourierQuote {
  courier_code: string;
  courier_name: string;
  available: boolean;
  unavailable_reason: string | null;
  chargeable_kg: number;
  services: ServiceQuote[];
}

/** Rupiah per chargeable kg between two districts: same city, same province, else by zones. */
export function ratePerKg(origin: AreaView, destination: AreaView): number {
  if (origin.city_id === destination.city_id) return TARIFF.sameCity;
  if (origin.province_id === destination.province_id) return TARIFF.sameProvince;
  const rate = TARIFF.zones[origin.zone]?.[destination.zone];
  if (rate === undefined) throw new Error(`No tariff from zone ${origin.zone} to zone ${destination.zone}`);
  return rate;
}

const etdText = (min: number, max: number): string => (min === max ? `${min} day${min === 1 ? '' : 's'}` : `${min}-${max} days`);

/**
 * The price of one service:
 * shipping = round_up_100(rate per kg × chargeable kg × service multiplier);
 * insurance (when asked) = round_up_100(0.2% of the value + 5,000);
 * COD (when cod > 0) = round_up_100(max(3% of cod, 2,500)).
 */
export function quoteService(service: CourierService, request: RateRequest, weight: ParcelWeight): ServiceQuote {
  const multiplierPercent = Math.round(service.rate_multiplier * 100);
  const shipping = roundFee((ratePerKg(request.origin, request.destination) * weight.chargeable_kg * multiplierPercent) / 100);
  const insurance = request.insurance ? roundFee(request.item_value * TARIFF.insuranceRate + TARIFF.insuranceFee) : 0;
  const cod = request.cod > 0 ? roundFee(Math.max(request.cod * TARIFF.codRate, TARIFF.codMinimum)) : 0;
  const [min, max] = service.etd_days;
  return {
    service_code: service.code,
    service_name: service.name,
    description: service.description,
    etd_days_min: min,
    etd_days_max: max,
    etd: etdText(min, max),
    shipping_fee: shipping,
    insurance_fee: insurance,
    cod_fee: cod,
    total_fee: shipping + insurance + cod,
  };
}

/**
 * Every service of a courier priced for a parcel. A courier that offers no cash on
 * delivery cannot carry a COD parcel: it is answered unavailable with no services.
 */
export function quoteCourier(courier: Courier, request: RateRequest): CourierQuote {
  const weight = chargeableWeight(request.weight_kg, request.dimensions);
  const noCod = request.cod > 0 && !courier.supports_cod;
  return {
    courier_code: courier.code,
    courier_name: courier.name,
    available: !noCod,
    unavailable_reason: noCod ? `${courier.name} does not offer cash on delivery` : null,
    chargeable_kg: weight.chargeable_kg,
    services: noCod ? [] : courier.services.map((s) => quoteService(s, request, weight)),
  };
}
