import type { Clock } from '../clock/clock.js';
import type { EventSink } from '../events.js';
import type { Fixtures } from '../fixtures/load.js';
import { domainMessages, Forbidden, RuleViolation } from '../domain/errors.js';
import type { Client } from '../config/clients.js';
import type { Store } from '../store/store.js';
import type { Journey } from '../tracking/journey.js';
import { contextOf } from '../tracking/render.js';
import { secondsOf, type Order, type OrderStatus, type TrackingEntry } from './types.js';

/** Statuses in which an order may still be cancelled: before the pick-up scan. */
export const CANCELLABLE: readonly OrderStatus[] = ['created', 'awb_generated'];

/** The messages of cancellation, in one place. */
export const cancelMessages = {
  cancelled: (orderNo: string) => `Order ${orderNo} has been cancelled.`,
  alreadyCancelled: (orderNo: string) => `Order ${orderNo} is already cancelled.`,
  notCancellable: (orderNo: string, status: OrderStatus) =>
    `Order ${orderNo} can no longer be cancelled: its status is ${status}. Orders can be cancelled only before the pick-up scan (status created or awb_generated).`,
} as const;

export interface CancelDeps {
  store: Store;
  journey: Journey;
  clock: Clock;
  events: EventSink;
  fixtures: Fixtures;
  /** The sandbox seed (names the branch staff of the tracking entry). */
  seed: string;
}

function cancelEntry(deps: CancelDeps, order: Order, at: number, reason: string | undefined): TrackingEntry {
  const newest = order.history[0] ? secondsOf(order.history[0]) : 0;
  return {
    note: 'Order cancelled',
    description: `Shipment cancelled by the shipper before pick-up${reason ? `: ${reason}` : ''}`,
    branch: contextOf(deps.fixtures, order, deps.seed).origin_branch,
    update_on: Math.max(Math.floor(at / 1000), newest),
    status: '5',
    pod_photo: null,
  };
}

/**
 * Cancels a client's order before pick-up: its journey stops (no AWB if none was
 * generated yet, no further scans), it is marked cancelled, a status "5" entry is
 * added to its tracking when it has an AWB, and `order.cancelled` is emitted.
 * Throws Forbidden for a read-only client and RuleViolation (naming `order_no`) once it is picked up.
 */
export function cancelOrder(deps: CancelDeps, client: Client, order: Order, reason?: string): void {
  if (client.read_only) throw new Forbidden(domainMessages.readOnly);
  if (!CANCELLABLE.includes(order.status)) {
    const message = order.status === 'cancelled' ? cancelMessages.alreadyCancelled(order.order_no) : cancelMessages.notCancellable(order.order_no, order.status);
    throw new RuleViolation([{ field: 'order_no', message: `is ${order.status}; only created or awb_generated orders can be cancelled` }], message);
  }
  const at = deps.clock.now();
  deps.journey.stop(order);
  order.status = 'cancelled';
  order.cancelled_at = at;
  order.updated_at = at;
  if (order.awb) order.history.unshift(cancelEntry(deps, order, at, reason));
  deps.store.put('orders', order.order_no, order);
  deps.store.commit();
  deps.events.emit({ type: 'order.cancelled', order, at });
}
