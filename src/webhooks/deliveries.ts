import { createHash } from 'node:crypto';
import type { Store } from '../store/store.js';
import type { Delivery, DeliveryStatus, WebhookEventType } from './types.js';

export const DELIVERIES = 'deliveries';
const COUNTER = 'webhook_counter';

/** Filters of the delivery log. */
export interface DeliveryFilter {
  order_no?: string;
  status?: DeliveryStatus;
  event?: WebhookEventType;
}

/**
 * The deliveries of every client in the store. Like the orders, another client's
 * delivery is `undefined` here, so it answers 404.
 */
export class DeliveryLog {
  /** Ids of each client's pending or paused deliveries (the outbox), built on first use. */
  private outbox: Map<string, Set<string>> | undefined;

  constructor(
    private readonly store: Store,
    private readonly seed: string,
  ) {}

  /** A new delivery id (the `webhook-id`): unique, and reproducible under a fixed seed. */
  nextId(): { id: string; seq: number } {
    const seq = (this.store.get<number>('meta', COUNTER) ?? 0) + 1;
    this.store.put('meta', COUNTER, seq);
    return { id: `msg_${createHash('sha256').update(`${this.seed}:delivery:${seq}`).digest('hex').slice(0, 24)}`, seq };
  }

  save(delivery: Delivery): void {
    this.store.put(DELIVERIES, delivery.id, delivery);
    if (this.outbox) this.track(delivery.client_id, delivery.id, delivery.status === 'pending' || delivery.status === 'paused');
  }

  /** How many of the client's deliveries are pending or paused (bounded by `--outbox-size`). */
  outstanding(clientId: string): number {
    if (!this.outbox) {
      this.outbox = new Map();
      for (const d of this.all()) this.track(d.client_id, d.id, d.status === 'pending' || d.status === 'paused');
    }
    return this.outbox.get(clientId)?.size ?? 0;
  }

  private track(clientId: string, id: string, open: boolean): void {
    const ids = this.outbox!.get(clientId) ?? new Set<string>();
    if (open) ids.add(id);
    else ids.delete(id);
    this.outbox!.set(clientId, ids);
  }

  /** The delivery as stored, whoever owns it (for the dispatcher). */
  byId(id: string): Delivery | undefined {
    return this.store.get<Delivery>(DELIVERIES, id);
  }

  /** The client's delivery, or undefined (also for another client's). */
  get(clientId: string, id: string): Delivery | undefined {
    const delivery = this.byId(id);
    return delivery?.client_id === clientId ? delivery : undefined;
  }

  /** The client's deliveries, newest first. */
  list(clientId: string, filter: DeliveryFilter = {}): Delivery[] {
    return this.all()
      .filter(
        (d) =>
          d.client_id === clientId &&
          (filter.order_no === undefined || d.order_no === filter.order_no) &&
          (filter.status === undefined || d.status === filter.status) &&
          (filter.event === undefined || d.event === filter.event),
      )
      .sort((a, b) => b.seq - a.seq);
  }

  all(): Delivery[] {
    return this.store.values<Delivery>(DELIVERIES);
  }

  remove(id: string): void {
    const delivery = this.byId(id);
    if (delivery && this.outbox) this.track(delivery.client_id, id, false);
    this.store.delete(DELIVERIES, id);
  }
}
