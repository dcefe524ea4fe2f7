import type { Clocks } from '../clock/index.js';
import type { EventSink } from '../events/index.js';
import type { Fixtures } from '../fixtures/index.js';
import { RuleViolation } from '../shared/index.js';
import type { Client } from '../clients/index.js';
import type { Storage } from '../store/index.js';
import type { Journey } from '../tracking/index.js';
import { contextOf } from '../tracking/index.js';
import { secondsOf, type Order, type OrderStatus, type Stored, type TrackingEntry } from '../records/index.js';

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
  storage: Storage;
  journey: Journey;
  clock: Clocks;
  events: EventSink;
  fixtures: Fixtures;
  /** The sandbox seed (names the branch staff of the tracking entry). */
  seed: string;
}

function cancelEntry(deps: CancelDeps, order: Order, at: number, reason: string | undefined): TrackingEntry {
  const newest = order.history[0] ? secondsOf(order.history[0]) : 0;
  return {
    note: 'Order cancelled',
    // A reason of spaces only is none: the description would end in a bare ": ".
    description: `Shipment cancelled by the shipper before pick-up${reason?.trim() ? `: ${reason.trim()}` : ''}`,
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
 * Throws RuleViolation (naming `order_no`) once
 * it is picked up. Undefined when the client has no such order.
 */
export function cancelOrder(deps: CancelDeps, client: Client, orderNo: string, reason?: string): Promise<Stored<Order> | undefined> {
  return deps.storage.transaction(async (tx) => {
    const order = await tx.orders.get(orderNo, client.id);
    if (!order) return undefined;
    if (!CANCELLABLE.includes(order.status)) {
      const message = order.status === 'cancelled' ? cancelMessages.alreadyCancelled(order.order_no) : cancelMessages.notCancellable(order.order_no, order.status);
      throw new RuleViolation([{ field: 'order_no', message: `is ${order.status}; only created or awb_generated orders can be cancelled` }], message);
    }
    const at = deps.clock.of(client.id);
    const stopped = await deps.journey.stop(tx, order);
    const cancelled = await tx.orders.update({
      ...stopped,
      status: 'cancelled',
      cancelled_at: at,
      updated_at: at,
      history: order.awb ? [cancelEntry(deps, order, at, reason), ...order.history] : order.history,
    });
    await deps.events.emit({ type: 'order.cancelled', order: cancelled, at }, tx);
    return cancelled;
  });
}
