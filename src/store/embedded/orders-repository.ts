import type { Order, OrderQuery, Page, Stored, Unversioned } from '../../records/index.js';
import type { OrderRepository } from '../port.js';
import type { Indexes } from './indexes.js';
import { pageOf } from './pages.js';
import type { PackedOrder } from './played-steps.js';
import { ORDERS } from './collections.js';
import { checkVersion, type Access } from './unit-of-work.js';
import type { UnpackedOrders } from './unpacked-orders.js';
import { insertNew, updateAt } from './versioned-writes.js';

/**
 * Orders as the port gives them. The store keeps them packed (see OrderPacker): they are
 * unpacked on the way out, through `unpacked`, which hands out the same object for a record
 * read again lately.
 */
export class EmbeddedOrders implements OrderRepository {
  constructor(
    private readonly access: Access,
    private readonly indexes: Indexes,
    private readonly unpacked: UnpackedOrders,
  ) {}

  async get(orderNo: string, clientId?: string): Promise<Stored<Order> | undefined> {
    const record = this.access.get(ORDERS, orderNo) as PackedOrder | undefined;
    // Another client's order is not unpacked (nor cached): its look-up costs what a missing number's does.
    if (clientId !== undefined && record?.client_id !== clientId) return undefined;
    return this.unpacked.of(record);
  }

  async getMany(orderNos: readonly string[]): Promise<Array<Stored<Order>>> {
    const found: Array<Stored<Order>> = [];
    for (const orderNo of orderNos) {
      const order = this.unpacked.of(this.access.get(ORDERS, orderNo));
      if (order) found.push(order);
    }
    return found;
  }

  async byAwb(awb: string, clientId?: string): Promise<Stored<Order> | undefined> {
    const orderNo = this.indexes.orders.byAwb.get(awb);
    return orderNo === undefined ? undefined : this.get(orderNo, clientId);
  }

  async batchExists(batchId: string): Promise<boolean> {
    return this.indexes.orders.hasBatch(batchId);
  }

  async insert(order: Unversioned<Order>): Promise<Stored<Order>> {
    return insertNew<Order>(this.access, ORDERS, order.order_no, order, `Order ${order.order_no}`);
  }

  async update(order: Stored<Order>): Promise<Stored<Order>> {
    return updateAt(this.access, ORDERS, order.order_no, order, `Order ${order.order_no}`);
  }

  async remove(order: Stored<Order>): Promise<void> {
    checkVersion(this.access, ORDERS, order.order_no, order.version, `Order ${order.order_no}`);
    this.access.remove(ORDERS, order.order_no);
  }

  async list(clientId: string, query: OrderQuery): Promise<Page<Stored<Order>>> {
    // Filters read the packed record: a filtered total looks at every order of the client (in slices, see pageOf).
    const keep = (o: PackedOrder): boolean =>
      o.client_id === clientId &&
      (query.status === undefined || o.status === query.status) &&
      (query.scenario === undefined || o.scenario === query.scenario) &&
      (query.courier_code === undefined || o.courier_code === query.courier_code) &&
      (query.search === undefined || o.order_no === query.search || o.awb === query.search || o.item.order_code === query.search);
    return pageOf<Order, PackedOrder>({
      keys: this.indexes.orders.byClient.get(clientId),
      cursor: query.cursor,
      limit: query.limit,
      sliced: !this.access.writable,
      ...(query.between ? { between: query.between } : {}),
      filtered: query.status !== undefined || query.scenario !== undefined || query.courier_code !== undefined || query.search !== undefined,
      load: (orderNo) => this.access.get<PackedOrder>(ORDERS, orderNo),
      keep,
      positionOf: (o) => ({ rank: o.created_at, id: o.order_no }),
      open: (o) => this.unpacked.of(o)!,
    });
  }

  async createdBefore(olderThan: number, limit: number, clientId?: string): Promise<Array<Stored<Order>>> {
    const found: Array<Stored<Order>> = [];
    const byAge = clientId === undefined ? this.indexes.orders.byAge : this.indexes.orders.byClient.get(clientId);
    if (byAge === undefined) return found;
    for (const orderNo of byAge.oldestFirst()) {
      const order = this.access.get<PackedOrder>(ORDERS, orderNo);
      if (!order) continue;
      if (order.created_at >= olderThan || found.length >= limit) break;
      found.push(this.unpacked.of(order)!);
    }
    return found;
  }

  async count(clientId?: string): Promise<number> {
    return clientId === undefined ? this.indexes.orders.byAge.size : (this.indexes.orders.byClient.get(clientId)?.size ?? 0);
  }
}
