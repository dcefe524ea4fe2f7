import type { Client } from '../config/clients.js';
import { parseDelayRange, type DelayRange } from '../config/duration.js';
import type { Clock } from '../clock/clock.js';
import type { Fixtures } from '../fixtures/load.js';
import type { IdFactory } from '../ids/factory.js';
import { RuleViolation } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { Journey } from '../tracking/journey.js';
import { checkCreateRequest } from './rules.js';
import type { CreateOrderRequest, Order } from './types.js';

export interface OrdersConfig {
  defaultScenario: string;
  awbDelay: DelayRange;
  maxItems: number;
}

export interface CreateOptions {
  /** From the X-Sandbox-Scenario header. */
  scenario?: string;
  /** From the X-Sandbox-Webhook-Chaos header. */
  webhookChaos?: string[];
}

export interface CreatedBatch {
  batch_id: string;
  order_numbers: string[];
}

/**
 * The orders of every client. Knows nothing of HTTP: it returns values, answers
 * `undefined` for "not there" (including another client's order) and throws
 * domain errors for rule violations.
 */
export class OrdersService {
  private readonly byAwb = new Map<string, string>();
  private readonly batches = new Set<string>();
  private ids: IdFactory | undefined;
  private journey: Journey | undefined;

  constructor(
    private readonly store: Store,
    private readonly fixtures: Fixtures,
    private readonly clock: Clock,
    private readonly config: OrdersConfig,
  ) {
    for (const order of store.values<Order>('orders')) this.index(order);
  }

  /** Wires the parts that need the service themselves (see sandbox.ts). */
  connect(ids: IdFactory, journey: Journey): void {
    this.ids = ids;
    this.journey = journey;
  }

  exists(kind: 'order' | 'batch' | 'awb', id: string): boolean {
    if (kind === 'order') return this.store.get('orders', id) !== undefined;
    return kind === 'batch' ? this.batches.has(id) : this.byAwb.has(id);
  }

  /** Stores one order per item; the AWB of each falls due after the client's AWB delay. */
  create(client: Client, request: CreateOrderRequest, options: CreateOptions = {}): CreatedBatch {
    checkCreateRequest(this.fixtures, client, request, this.config.maxItems);
    const scenario = options.scenario ?? client.scenario ?? this.config.defaultScenario;
    if (!this.fixtures.scenarios.has(scenario)) {
      throw new RuleViolation([{ field: 'header.x-sandbox-scenario', message: `must be one of: ${this.scenarioNames().join(', ')}` }], `Unknown scenario "${scenario}".`);
    }
    const { ids, journey } = this.wired();
    const delay = (client.awb_delay !== undefined ? parseDelayRange(client.awb_delay) : undefined) ?? this.config.awbDelay;
    const now = this.clock.now();
    const batchId = ids.batchId();
    this.batches.add(batchId);
    const { items, courier_code, ...sender } = request;
    const orders = items.map((item): Order => {
      const orderNo = ids.orderNumber();
      return {
        order_no: orderNo,
        batch_id: batchId,
        client_id: client.id,
        courier_code,
        scenario,
        status: 'created',
        sender,
        item,
        awb: null,
        awb_due_at: journey.awbDueAt(orderNo, now, delay),
        awb_generated_at: null,
        awb_error: null,
        journey_start: null,
        next_step: null,
        history: [],
        ...(options.webhookChaos?.length ? { webhook_chaos: options.webhookChaos } : {}),
        created_at: now,
        updated_at: now,
        cancelled_at: null,
      };
    });
    for (const order of orders) this.store.put('orders', order.order_no, order);
    this.store.commit();
    for (const order of orders) journey.resume(order);
    return { batch_id: batchId, order_numbers: orders.map((o) => o.order_no) };
  }

  /** The client's order, or undefined (also for another client's order). */
  get(client: Client, orderNo: string): Order | undefined {
    const order = this.store.get<Order>('orders', orderNo);
    return order?.client_id === client.id ? order : undefined;
  }

  /** The client's order with this AWB, or undefined. */
  byAwbOf(client: Client, awb: string): Order | undefined {
    const orderNo = this.byAwb.get(awb);
    return orderNo === undefined ? undefined : this.get(client, orderNo);
  }

  /** Every order of the client, newest first. */
  list(client: Client): Order[] {
    return this.store
      .values<Order>('orders')
      .filter((o) => o.client_id === client.id)
      .sort((a, b) => b.created_at - a.created_at || (a.order_no < b.order_no ? 1 : -1));
  }

  /** Removes every order of the client (control API reset). Returns how many. */
  removeAll(client: Client): number {
    let removed = 0;
    for (const order of this.store.values<Order>('orders')) {
      if (order.client_id !== client.id) continue;
      this.wired().journey.stop(order);
      this.forget(order);
      removed += 1;
    }
    this.store.commit();
    return removed;
  }

  /** Removes one order from the store and the indexes. */
  forget(order: Order): void {
    this.store.delete('orders', order.order_no);
    if (order.awb) this.byAwb.delete(order.awb);
  }

  index(order: Order): void {
    if (order.awb) this.byAwb.set(order.awb, order.order_no);
    this.batches.add(order.batch_id);
  }

  scenarioNames(): string[] {
    return [...this.fixtures.scenarios.keys()];
  }

  private wired(): { ids: IdFactory; journey: Journey } {
    if (!this.ids || !this.journey) throw new Error('OrdersService used before connect()');
    return { ids: this.ids, journey: this.journey };
  }
}
