import type { Order, Stored } from '../../records/index.js';
import { freeze } from '../freeze.js';
import { copyWith } from './file/index.js';
import { PlayedSteps, type PackedOrder } from './played-steps.js';
import { stored } from './stored.js';

/** A stored order as the port gives it: frozen, its played steps as objects. */
export function unpacked(value: unknown): Stored<Order> | undefined {
  const order = value as PackedOrder | undefined;
  if (order === undefined || !(order.history instanceof PlayedSteps)) return stored(order as Order | undefined);
  return freeze(copyWith(order, { history: order.history.entries(), version: order.version ?? 0 })) as Stored<Order>;
}

/**
 * Orders handed out lately, by the stored record they were unpacked from. Reading an
 * order again (a partner polling its tracking) gives the same frozen object: what is
 * cached per order and per step object (tracking's rendered steps) is found again, and
 * the read allocates nothing. Bounded, oldest out first.
 */
export class UnpackedOrders {
  private readonly recent = new Map<object, Stored<Order>>();

  constructor(private readonly size = 4096) {}

  of(value: unknown): Stored<Order> | undefined {
    if (typeof value !== 'object' || value === null || !((value as PackedOrder).history instanceof PlayedSteps)) return stored(value as Order | undefined);
    let order = this.recent.get(value);
    if (order === undefined) {
      order = unpacked(value)!;
      if (this.recent.size >= this.size) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(value, order);
    }
    return order;
  }
}
