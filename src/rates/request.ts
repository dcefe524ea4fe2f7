import { assertCourierEnabled } from '../clients/index.js';
import type { Client } from '../clients/index.js';
import { areaOf } from '../coverage/index.js';
import type { Fixtures, Courier } from '../fixtures/index.js';
import { amountProblem, MAX_AMOUNT, MAX_SIDE_CM, MAX_WEIGHT_KG, RuleViolation, type FieldError } from '../shared/index.js';
import type { RateRequest } from './quote.js';

/** Which query parameter carries each part of a rate request, so errors name it. */
export interface RateParams {
  origin: string;
  destination: string;
  weight: string;
  length: string;
  width: string;
  height: string;
  itemValue: string;
  insurance: string;
  cod: string;
  courier: string;
  service: string;
}

/** The parameters of GET /v1/rates/shipping-fee (and its stream). */
export const SHIPPING_FEE_PARAMS: RateParams = {
  origin: 'origin',
  destination: 'destination',
  weight: 'weight',
  length: 'length',
  width: 'width',
  height: 'height',
  itemValue: 'item_value',
  insurance: 'insurance',
  cod: 'cod',
  courier: 'courier_code',
  service: 'service_code',
};

/** The parameters of GET /v1/rates/estimation: named as the fields of a create request. */
export const ESTIMATION_PARAMS: RateParams = {
  ...SHIPPING_FEE_PARAMS,
  origin: 'sender_addr_id',
  destination: 'receiver_addr_id',
  weight: 'item_weight',
  length: 'item_length',
  width: 'item_width',
  height: 'item_height',
};

const NOT_AN_AREA = 'is not a district id of the coverage data (see GET /v1/area/search)';

/** A rate request and the couriers (with the services) to price it for. */
export interface RateQuery {
  request: RateRequest;
  couriers: Courier[];
}

const text = (query: Record<string, unknown>, name: string): string | undefined =>
  query[name] === undefined ? undefined : String(query[name]);
const number = (query: Record<string, unknown>, name: string): number => Number(text(query, name) ?? '0');

/**
 * Reads a validated query (the spec has checked types and formats) into a rate
 * request: area ids must be known districts, the weight above 0, the courier and
 * service known and enabled for the client. Throws the 400 naming each parameter at
 * fault, or 403 for a courier the client may not use.
 */
export function readRateQuery(fixtures: Fixtures, client: Client, query: Record<string, unknown>, names: RateParams): RateQuery {
  const problems: FieldError[] = [];
  const origin = areaOf(fixtures, text(query, names.origin) ?? '');
  const destination = areaOf(fixtures, text(query, names.destination) ?? '');
  if (!origin) problems.push({ field: names.origin, message: NOT_AN_AREA });
  if (!destination) problems.push({ field: names.destination, message: NOT_AN_AREA });
  const weight = number(query, names.weight);
  if (!(weight > 0)) problems.push({ field: names.weight, message: 'must be above 0 (kg)' });
  const amounts = [
    [names.weight, MAX_WEIGHT_KG, 'kg'],
    [names.length, MAX_SIDE_CM, 'cm'],
    [names.width, MAX_SIDE_CM, 'cm'],
    [names.height, MAX_SIDE_CM, 'cm'],
    [names.itemValue, MAX_AMOUNT, ''],
    [names.cod, MAX_AMOUNT, ''],
  ] as const;
  for (const [name, max, unit] of amounts) {
    const problem = amountProblem(name, text(query, name), max, unit);
    if (problem) problems.push(problem);
  }
  const couriers = selectCouriers(fixtures, client, text(query, names.courier), text(query, names.service), names, problems);
  if (problems.length > 0 || !origin || !destination) throw new RuleViolation(problems);
  return {
    couriers,
    request: {
      origin,
      destination,
      weight_kg: weight,
      dimensions: { length: number(query, names.length), width: number(query, names.width), height: number(query, names.height) },
      item_value: number(query, names.itemValue),
      insurance: text(query, names.insurance) === '1',
      cod: number(query, names.cod),
    },
  };
}

/** The couriers a client may use, in fixture order. */
export function enabledCouriers(fixtures: Fixtures, client: Client): Courier[] {
  return [...fixtures.couriers.values()].filter((c) => !client.couriers || client.couriers.includes(c.code));
}

function selectCouriers(
  fixtures: Fixtures,
  client: Client,
  courierCode: string | undefined,
  serviceCode: string | undefined,
  names: RateParams,
  problems: FieldError[],
): Courier[] {
  if (courierCode === undefined) {
    if (serviceCode !== undefined) problems.push({ field: names.service, message: `needs ${names.courier}: a service code belongs to one courier` });
    return enabledCouriers(fixtures, client);
  }
  const courier = fixtures.couriers.get(courierCode);
  if (!courier) {
    problems.push({ field: names.courier, message: `must be one of: ${[...fixtures.couriers.keys()].join(', ')}` });
    return [];
  }
  assertCourierEnabled(client, courier.code, names.courier);
  if (serviceCode === undefined) return [courier];
  const services = courier.services.filter((s) => s.code === serviceCode);
  if (services.length === 0) {
    problems.push({ field: names.service, message: `is not a service of ${courier.code}; use one of: ${courier.services.map((s) => s.code).join(', ')}` });
  }
  return [{ ...courier, services }];
}
