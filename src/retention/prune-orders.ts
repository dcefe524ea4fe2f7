import type { Order } from '../orders/types.js';
import type { Services } from '../services.js';

/**
 * Removes every order created before `olderThan` (sandbox epoch ms), whatever its
 * state: its pending AWB or tracking steps are cancelled and its AWB no longer
 * tracks. Returns how many were removed.
 */
export function pruneOrders(services: Pick<Services, 'store' | 'orders' | 'journey'>, olderThan: number): number {
  let removed = 0;
  for (const order of services.store.values<Order>('orders')) {
    if (order.created_at >= olderThan) continue;
    services.journey.stop(order);
    services.orders.forget(order);
    removed += 1;
  }
  if (removed > 0) services.store.commit();
  return removed;
}
