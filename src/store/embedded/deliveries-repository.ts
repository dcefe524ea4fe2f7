import { DEFAULT_ENDPOINT, type Delivery, type DeliveryStatus, type DeliveryQuery, type Page, type Stored, type Unversioned } from '../../records/index.js';
import type { DeliveryRepository } from '../port.js';
import type { Indexes } from './indexes.js';
import { pageOf } from './pages.js';
import { DELIVERIES } from './collections.js';
import { SortedKeys } from './sorted-keys.js';
import { stored } from './stored.js';
import type { Access } from './unit-of-work.js';
import { insertNew, updateAt } from './versioned-writes.js';

/** Webhook deliveries, kept as the port gives them. */
export class EmbeddedDeliveries implements DeliveryRepository {
  constructor(
    private readonly access: Access,
    private readonly indexes: Indexes,
  ) {}

  async get(id: string): Promise<Stored<Delivery> | undefined> {
    return stored(this.access.get<Delivery>(DELIVERIES, id));
  }

  async getMany(ids: readonly string[]): Promise<Array<Stored<Delivery>>> {
    const found: Array<Stored<Delivery>> = [];
    for (const id of ids) {
      const delivery = stored(this.access.get<Delivery>(DELIVERIES, id));
      if (delivery) found.push(delivery);
    }
    return found;
  }

  async ofOrders(clientId: string, orderNos: readonly string[], limit: number): Promise<Array<Stored<Delivery>>> {
    const found: Array<Stored<Delivery>> = [];
    for (const orderNo of orderNos) {
      for (const id of this.indexes.deliveries.ofOrder(orderNo)) {
        if (found.length >= limit) return found;
        const delivery = stored(this.access.get<Delivery>(DELIVERIES, id));
        if (delivery?.client_id === clientId) found.push(delivery);
      }
    }
    return found;
  }

  async insert(delivery: Unversioned<Delivery>): Promise<Stored<Delivery>> {
    return insertNew<Delivery>(this.access, DELIVERIES, delivery.id, delivery, `Delivery ${delivery.id}`);
  }

  async update(delivery: Stored<Delivery>): Promise<Stored<Delivery>> {
    return updateAt(this.access, DELIVERIES, delivery.id, delivery, `Delivery ${delivery.id}`);
  }

  async remove(delivery: Stored<Delivery>): Promise<void> {
    this.access.remove(DELIVERIES, delivery.id);
  }

  async list(clientId: string, query: DeliveryQuery): Promise<Page<Stored<Delivery>>> {
    const keep = (d: Stored<Delivery>): boolean =>
      d.client_id === clientId &&
      (query.order_no === undefined || d.order_no === query.order_no) &&
      (query.status === undefined || d.status === query.status) &&
      (query.event === undefined || d.event === query.event) &&
      (query.endpoint_id === undefined || (d.endpoint_id ?? DEFAULT_ENDPOINT) === query.endpoint_id) &&
      (query.dueBy === undefined || (d.next_attempt_at !== null && d.next_attempt_at <= query.dueBy)) &&
      (query.dueAfter === undefined || (d.next_attempt_at !== null && d.next_attempt_at > query.dueAfter));
    return pageOf<Delivery, Stored<Delivery>>({
      keys: query.order_no !== undefined ? this.ofOrder(query.order_no) : query.status === 'paused' ? this.indexes.deliveries.paused.get(clientId) : this.indexes.deliveries.byClient.get(clientId),
      cursor: query.cursor,
      limit: query.limit,
      counted: query.total !== false,
      sliced: !this.access.writable,
      ...(query.between ? { between: query.between } : {}),
      filtered: query.order_no !== undefined || query.status !== undefined || query.event !== undefined || query.endpoint_id !== undefined || query.dueBy !== undefined || query.dueAfter !== undefined,
      load: (id) => stored(this.access.get<Delivery>(DELIVERIES, id)),
      keep,
      positionOf: (d) => ({ rank: d.seq, id: d.id }),
      open: (d) => d,
    });
  }

  /** One order's deliveries in listing order: a few, where the client's may be many. */
  private ofOrder(orderNo: string): SortedKeys {
    const keys = new SortedKeys();
    for (const id of this.indexes.deliveries.ofOrder(orderNo)) {
      const delivery = this.access.get<Delivery>(DELIVERIES, id);
      if (delivery) keys.add({ rank: delivery.seq, id });
    }
    return keys;
  }

  async countByStatus(clientId: string, status: DeliveryStatus, upTo = Number.MAX_SAFE_INTEGER): Promise<number> {
    // The indexes count committed deliveries: the unit's own writes are added (a unit made of parts holds several jobs' deliveries).
    return Math.min(upTo, (this.indexes.deliveries.statusCounts.get(clientId)?.get(status) ?? 0) + this.ownChange(clientId, status));
  }

  ownByStatus(clientId: string, status: DeliveryStatus): number {
    return Math.max(0, this.ownChange(clientId, status));
  }

  /** How many more (or fewer) of the client's deliveries have the status with this unit's writes than without. */
  private ownChange(clientId: string, status: DeliveryStatus): number {
    if (!this.access.written) return 0;
    const counts = (record: unknown): number => {
      const delivery = record as Delivery | undefined;
      return delivery?.client_id === clientId && delivery.status === status ? 1 : 0;
    };
    let change = 0;
    for (const { before, after } of this.access.written(DELIVERIES)) change += counts(after) - counts(before);
    return change;
  }

  async settledBefore(olderThan: number, limit: number, clientId?: string): Promise<Array<Stored<Delivery>>> {
    const found: Array<Stored<Delivery>> = [];
    // A client's are listed in the order they were made (their sequence), which its clock follows.
    const oldest = clientId === undefined ? this.indexes.deliveries.byAge : this.indexes.deliveries.byClient.get(clientId);
    if (oldest === undefined) return found;
    for (const id of oldest.oldestFirst()) {
      const delivery = stored(this.access.get<Delivery>(DELIVERIES, id));
      if (!delivery) continue;
      if (delivery.created_at >= olderThan || found.length >= limit) break;
      if (delivery.status === 'delivered' || delivery.status === 'failed') found.push(delivery);
    }
    return found;
  }
}
