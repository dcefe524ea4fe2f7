import type { Delivery, Stored } from '../records/index.js';
import { remembered } from '../shared/index.js';
import type { Storage } from '../store/index.js';

/**
 * The store reads that judging one batch of observations shares: each order's announcing
 * webhooks read once per batch, when a judgment first needs them (one listing at a time:
 * a batch of many orders does not take every pooled connection). A tracking read is
 * judged by its order as the answer showed it (OperationInput.answeredOrder), which is
 * not read again. A judgment sees the webhooks as they were once its batch began to be
 * judged: after its request was answered. A read that failed is not kept: the next
 * judgment that needs it reads again.
 */
export class BatchReads {
  private readonly announcing = new Map<string, Promise<Array<Stored<Delivery>>>>();

  constructor(private readonly storage: Storage) {}

  /** The order's `awb.generated` deliveries (the first 20). */
  announced(clientId: string, orderNo: string): Promise<Array<Stored<Delivery>>> {
    return remembered(this.announcing, `${clientId}\n${orderNo}`, async () => (await this.storage.deliveries.list(clientId, { limit: 20, order_no: orderNo, event: 'awb.generated', total: false })).items);
  }
}
