import type { Client } from '../clients/index.js';
import { letRequestsIn, parseDelayRange, type DelayRange, RuleViolation } from '../shared/index.js';
import type { Clocks } from '../clock/index.js';
import type { Fixtures } from '../fixtures/index.js';
import type { IdFactory } from '../ids/index.js';
import type { Repositories, Storage } from '../store/index.js';
import type { Journey } from '../tracking/index.js';
import { keepKnown, senderFields, type CreateFields } from './fields.js';
import { checkCreateRequest } from './rules.js';
import type { CreateOrderRequest, Order, OrderQuery, Page, Stored } from '../records/index.js';

export interface OrdersConfig {
  defaultScenario: string;
  awbDelay: DelayRange;
  maxItems: number;
  /** The create request's fields the served spec knows: only those are stored (absent: all that was sent). */
  fields?: CreateFields;
}

export interface CreateOptions {
  /** From the X-Sandbox-Scenario header. */
  scenario?: string;
  /** From the X-Sandbox-Webhook-Chaos header. */
  webhookChaos?: string[];
  /**
   * When the orders were made on the client's clock, if not now: an order set up at a
   * step of its journey is made in the past (see OrderSetups), never in the future.
   */
  at?: number;
  /** No AWB job: the caller plays the AWB itself at once (Journey.layOut), so that no timer can take it first, or holds it until asked (POST /__sandbox/orders/{order_no}/awb). */
  noAwbJob?: boolean;
}

export interface CreatedBatch {
  batch_id: string;
  order_numbers: string[];
}

export interface OrdersDeps {
  storage: Storage;
  fixtures: Fixtures;
  clock: Clocks;
  ids: IdFactory;
  journey: Journey;
}

/** Told of each create once it is committed: whose orders, and how many. */
export type CreatedListener = (clientId: string, count: number) => void;

/**
 * The orders of every client. Knows nothing of HTTP: it returns values, answers
 * `undefined` for "not there" (including another client's order) and throws
 * domain errors for rule violations.
 */
export class OrdersService {
  private readonly createdListeners: CreatedListener[] = [];

  constructor(
    private readonly deps: OrdersDeps,
    private readonly config: OrdersConfig,
  ) {}

  /** Stores one order per item, all or none; the AWB of each falls due after the client's AWB delay. */
  async create(client: Client, request: CreateOrderRequest, options: CreateOptions = {}): Promise<CreatedBatch> {
    const { storage, ids, journey, clock } = this.deps;
    const scenario = this.check(client, request, options);
    const delay = (client.awb_delay !== undefined ? parseDelayRange(client.awb_delay) : undefined) ?? this.config.awbDelay;
    const { items, courier_code } = request;
    const sender = senderFields(request, this.config.fields?.sender);
    const created = await storage.transaction(async (tx) => {
      const now = Math.min(options.at ?? Infinity, clock.of(client.id));
      const batchId = await ids.batchId(tx, client.id);
      const orderNumbers: string[] = [];
      for (const item of items) {
        const orderNo = await ids.orderNumber(tx, client.id);
        const order = await tx.orders.insert({
          order_no: orderNo,
          batch_id: batchId,
          client_id: client.id,
          courier_code,
          scenario,
          status: 'created',
          sender,
          item: keepKnown(item, this.config.fields?.item),
          awb: null,
          awb_due_at: options.noAwbJob ? null : journey.awbDueAt(orderNo, now, delay),
          awb_generated_at: null,
          awb_error: null,
          journey_start: null,
          next_step: null,
          history: [],
          ...(options.webhookChaos?.length ? { webhook_chaos: options.webhookChaos } : {}),
          created_at: now,
          updated_at: now,
          cancelled_at: null,
        });
        await journey.schedule(tx, order);
        orderNumbers.push(orderNo);
      }
      return { batch_id: batchId, order_numbers: orderNumbers };
    });
    for (const listener of this.createdListeners) listener(client.id, created.order_numbers.length);
    return created;
  }

  /** The create request's fields the served spec knows (undefined: the spec does not say, and all that was sent is kept). */
  get fields(): CreateFields | undefined {
    return this.config.fields;
  }

  /** Tells `listener` of every create from now on, once it is committed (metrics, retention by count). */
  whenCreated(listener: CreatedListener): void {
    this.createdListeners.push(listener);
  }

  /** The client's order, or undefined (also for another client's order). */
  async get(client: Client, orderNo: string): Promise<Stored<Order> | undefined> {
    return this.deps.storage.orders.get(orderNo, client.id);
  }

  /** The client's order with this AWB, or undefined. */
  async byAwbOf(client: Client, awb: string): Promise<Stored<Order> | undefined> {
    return this.deps.storage.orders.byAwb(awb, client.id);
  }

  /** The client's orders, newest first, a page at a time. */
  list(client: Client, query: OrderQuery): Promise<Page<Stored<Order>>> {
    return this.deps.storage.orders.list(client.id, query);
  }

  /** Removes every order of the client (control API reset), their jobs with them. Returns how many. */
  async removeAll(client: Client): Promise<number> {
    const { storage } = this.deps;
    let removed = 0;
    for (;;) {
      const page = await storage.orders.list(client.id, { limit: 500 });
      if (page.items.length === 0) return removed;
      removed += (await storage.transaction((tx) => this.removeAsTheyAre(tx, page.items))).length;
      await letRequestsIn();
    }
  }

  /** Removes the client's orders whose order code is `orderCode` (a provider state's teardown), their jobs with them. Returns how many. */
  async removeByCode(client: Client, orderCode: string): Promise<string[]> {
    const { storage } = this.deps;
    const removed: string[] = [];
    // A page per unit of work, each page found afresh: the one before is gone from the search.
    for (;;) {
      const page = await storage.orders.list(client.id, { limit: 500, search: orderCode });
      const mine = page.items.filter((o) => o.item.order_code === orderCode);
      if (mine.length === 0) return removed;
      // Those still there when its unit ran: a teardown sent at the same time may have removed some (each is counted once).
      removed.push(...(await storage.transaction((tx) => this.removeAsTheyAre(tx, mine))));
      await letRequestsIn();
    }
  }

  /** Removes orders (of every client, or of the one given) created before `olderThan` (retention), a slice at a time. Returns how many. */
  async removeOlderThan(olderThan: number, clientId?: string): Promise<number> {
    const { storage } = this.deps;
    let removed = 0;
    for (;;) {
      const old = await storage.orders.createdBefore(olderThan, 500, clientId);
      if (old.length === 0) return removed;
      removed += (await storage.transaction((tx) => this.removeAsTheyAre(tx, old))).length;
      await letRequestsIn();
    }
  }

  /** Removes these orders as they are now, their jobs with them, in one unit of work (retention by count). Answers how many were still there. */
  async removeListed(listed: ReadonlyArray<Pick<Order, 'order_no'>>): Promise<number> {
    return (await this.deps.storage.transaction((tx) => this.removeAsTheyAre(tx, listed))).length;
  }

  /**
   * Removes these orders as they are now, their jobs with them, in `tx`: an AWB job, a
   * step or another removal may have changed or removed one since it was listed (removing
   * the version listed failed a whole sweep or reset with a Conflict). Answers the order
   * numbers of those still there, which it removed.
   */
  private async removeAsTheyAre(tx: Repositories, listed: ReadonlyArray<Pick<Order, 'order_no'>>): Promise<string[]> {
    const orders = await tx.orders.getMany(listed.map((o) => o.order_no));
    for (const order of orders) {
      await this.deps.journey.stop(tx, order);
      await tx.orders.remove(order);
    }
    return orders.map((order) => order.order_no);
  }

  /**
   * The checks of a create request beyond its schema (courier, service, areas, amounts, the
   * couriers the client may use, the scenario asked for), with nothing stored: throws the
   * RuleViolation or Forbidden that `create` would; returns the scenario the orders get.
   */
  check(client: Client, request: CreateOrderRequest, options: Pick<CreateOptions, 'scenario'> = {}): string {
    const { fixtures } = this.deps;
    checkCreateRequest(fixtures, client, request, this.config.maxItems);
    const scenario = options.scenario ?? client.scenario ?? this.config.defaultScenario;
    if (!fixtures.scenarios.has(scenario)) {
      throw new RuleViolation([{ field: 'header.x-sandbox-scenario', message: `must be one of: ${this.scenarioNames().join(', ')}` }], `Unknown scenario "${scenario}".`);
    }
    return scenario;
  }

  scenarioNames(): string[] {
    return [...this.deps.fixtures.scenarios.keys()];
  }
}
