import type { Delivery, Order, Stored } from '../records/index.js';
import { remembered } from '../shared/index.js';
import type { Storage } from '../store/index.js';

/**
 * The store reads that judging one batch of observations shares: each AWB's order read
 * once per batch, all of them asked for before the first judgment, so that a PostgreSQL
 * replica sends them together (point reads of one turn of the loop go out as one round
 * trip); and each order's announcing webhooks read once per batch, when a judgment first
 * needs them (one listing at a time: a batch of many orders does not take every pooled
 * connection). A judgment sees the store as it was once its batch began to be judged:
 * after its request was answered, as before. A read that failed is not kept: the next
 * judgment that needs it reads again.
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
    return remembered(this.announcing, `${clientId}\n${orderNo}`, async () => (await this.storage.deliveries.list(clientId, { limit: 20, order_no: orderNo, event: 'awb.generated', total: false })).items);
  }
}
