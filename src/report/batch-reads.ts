import type { Delivery, Order, Stored } from '../records/index.js';
import type { Storage } from '../store/index.js';

/**
 * The store reads that judging one batch of observations shares: each AWB's order and
 * each order's announcing webhooks read once per batch, and all of them asked for before
 * the first judgment, so that a PostgreSQL replica sends them together (point reads of
 * one turn of the loop go out as one round trip) instead of two round trips per tracking
 * read, one after the other. A judgment sees the store as it was when its batch began
 * to be judged: after its request was answered, as before.
 */
export class BatchReads {
  private readonly orders = new Map<string, Promise<Stored<Order> | undefined>>();
  private readonly announcing = new Map<string, Promise<Array<Stored<Delivery>>>>();

  constructor(private readonly storage: Storage) {}

  /** The order with this AWB, whoever owns it. */
  order(awb: string): Promise<Stored<Order> | undefined> {
    return remembered(this.orders, awb, () => this.storage.orders.byAwb(awb));
  }

  /** The order's `awb.generated` deliveries (the first 20). */
  announced(clientId: string, orderNo: string): Promise<Array<Stored<Delivery>>> {
    return remembered(this.announcing, `${clientId}\n${orderNo}`, async () => (await this.storage.deliveries.list(clientId, { limit: 20, order_no: orderNo, event: 'awb.generated' })).items);
  }

  /** Starts the reads judging a tracking read of this AWB by this client will ask for. */
  prefetchTracking(clientId: string, awb: string): void {
    this.order(awb)
      .then((order) => (order?.client_id === clientId ? this.announced(clientId, order.order_no) : undefined))
      .catch(() => undefined); // the judgment asks again and meets the failure itself
  }
}

/** The read under `key`, started by `read` the first time it is asked for. */
function remembered<T>(reads: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
  let pending = reads.get(key);
  if (!pending) {
    pending = read();
    pending.catch(() => undefined); // a read nobody awaits in the end fails quietly; whoever awaits it sees the failure
    reads.set(key, pending);
  }
  return pending;
}
