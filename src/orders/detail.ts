import { areaOf } from '../coverage/index.js';
import type { Fixtures } from '../fixtures/index.js';
import { orderRate } from '../rates/index.js';
import { epochSeconds, orderIdentity, type Order, type TrackingEntry } from '../records/index.js';

const seconds = (ms: number | null): number | null => (ms === null ? null : epochSeconds(ms));

/**
 * An order as GET /v1/order/{order_no} shows it: what the client sent (sender and
 * item), the areas and price they resolve to, the AWB (or null), the status and the
 * scenario, with times in Unix epoch seconds like the tracking answer.
 */
export function orderDetail(fixtures: Fixtures, order: Order, history: TrackingEntry[]) {
  const latest = history.find((e) => e.status !== null);
  const service = fixtures.couriers.get(order.courier_code)?.services.find((s) => s.code === order.item.service_code);
  return {
    ...orderIdentity(order),
    service_name: service?.name ?? null,
    awb: order.awb,
    awb_error: order.awb_error,
    status: order.status,
    last_status: latest?.status ?? null,
    scenario: order.scenario,
    sender: order.sender,
    item: order.item,
    sender_area: areaOf(fixtures, order.sender.sender_addr_id) ?? null,
    receiver_area: areaOf(fixtures, order.item.receiver_addr_id) ?? null,
    rate: orderRate(fixtures, order),
    created_at: seconds(order.created_at),
    updated_at: seconds(order.updated_at),
    awb_generated_at: seconds(order.awb_generated_at),
    cancelled_at: seconds(order.cancelled_at),
  };
}
