import type { Client } from '../clients/index.js';
import type { OrderStage } from '../fixtures/index.js';
import type { Order, Stored } from '../records/index.js';
import { Conflict, RuleViolation } from '../shared/index.js';
import { cancelOrder, type CancelDeps, type OrdersService } from '../orders/index.js';
import type { Journey } from '../tracking/index.js';

/** Where an order is to stand: a stage of its journey in a scenario (`step` for the `at_step` stage). */
export interface OrderTarget {
  stage: OrderStage;
  scenario: string;
  step?: string;
}

export interface SetupDeps extends CancelDeps {
  orders: OrdersService;
  journey: Journey;
}

/**
 * The one way to set up an order at a stage of its journey, for `POST
 * /__sandbox/events/trigger` and the Pact provider states. A new order is the fixture
 * order (fixtures/states/order.json), made as long before the client's current time as
 * its journey up to the target takes, and played up to it at once: its AWB at its
 * creation time, each step at its offset after it, every history timestamp in the past.
 * An order set up `created` holds its AWB until asked (`POST /__sandbox/orders/{no}/awb`).
 * So no clock ever moves back, and the next step is still due at its own time. Each
 * event on the way (the AWB's webhook, a cancellation) goes to the outbox as it would.
 */
export class OrderSetups {
  constructor(private readonly deps: SetupDeps) {}

  /** A fresh order at `target`, with `orderCode` as its item's order code. */
  async make(client: Client, target: OrderTarget, orderCode: string): Promise<Stored<Order>> {
    const { orders, journey, fixtures, clock } = this.deps;
    const span = target.stage === 'at_step' ? journey.spanTo(target.scenario, target.step) : 0;
    const fixture = fixtures.stateOrder;
    // The fixture's courier, or the first the client may use: a client limited to other couriers gets an order it could make.
    const courier = client.couriers === undefined || client.couriers.includes(fixture.courier_code) ? undefined : fixtures.couriers.get(client.couriers[0] ?? '');
    const request = courier
      ? { ...fixture, courier_code: courier.code, items: [{ ...fixture.items[0]!, service_code: courier.services[0]!.code, order_code: orderCode }] }
      : { ...fixture, items: [{ ...fixture.items[0]!, order_code: orderCode }] };
    // No AWB job: the AWB is played at once, or (`created`) held until asked, so the state holds however fast the client's clock runs.
    const made = await orders.create(client, request, { scenario: target.scenario, at: clock.of(client.id) - span, noAwbJob: true });
    const orderNo = made.order_numbers[0]!;
    if (target.stage === 'created') return (await orders.get(client, orderNo))!;
    return this.reach(client, (await journey.layOut(orderNo, target.step))!, target);
  }

  /**
   * An existing order of the client taken to `target` from where it is: its AWB made now
   * (or failed, when its scenario fails it), its journey played up to the step (earlier
   * steps laid out in the past), or cancelled. Conflict when it cannot get there from
   * where it stands (a step already past, an AWB it already has).
   */
  async take(client: Client, order: Stored<Order>, target: OrderTarget): Promise<Stored<Order>> {
    const { journey } = this.deps;
    if (target.stage === 'awb_generated' || target.stage === 'awb_failed') {
      const wanted = target.stage === 'awb_generated' ? 'generated' : 'fails';
      if (order.status !== 'created') throw new Conflict(`Order ${order.order_no} is ${order.status}: its AWB was settled before (trigger it on a new order instead).`);
      if (journey.scenarioOf(order).awb !== wanted) throw new Conflict(`Order ${order.order_no} follows scenario ${order.scenario}, whose AWB ${wanted === 'fails' ? 'is generated' : 'fails'}: trigger it on a new order instead.`);
      return (await journey.generateNow(order.order_no))!;
    }
    if (target.stage === 'cancelled') {
      if (order.status !== 'created' && order.status !== 'awb_generated') throw new Conflict(`Order ${order.order_no} is ${order.status}: only an order not yet picked up (created or awb_generated) can be cancelled.`);
      return this.cancelled(client, order.order_no);
    }
    if (target.stage === 'at_step') {
      if (target.scenario !== order.scenario) throw new RuleViolation([{ field: 'scenario', message: `must be the order's own scenario, ${order.scenario} (or left out)` }]);
      const withAwb = order.status === 'created' ? await journey.generateNow(order.order_no) : order;
      if (withAwb?.status === 'awb_failed') throw new Conflict(`Order ${order.order_no} has no AWB (${order.scenario} fails it): it has no tracking steps.`);
      if (withAwb?.status === 'cancelled') throw new Conflict(`Order ${order.order_no} is cancelled: it has no tracking steps to play (trigger it on a new order instead).`);
      const advanced = await journey.advance(order.order_no, target.step);
      if (!advanced) throw new Conflict(`Order ${order.order_no} is past step ${target.step} already, or has no step left.`);
      return advanced;
    }
    return order;
  }

  private reach(client: Client, order: Stored<Order>, target: OrderTarget): Promise<Stored<Order>> | Stored<Order> {
    return target.stage === 'cancelled' ? this.cancelled(client, order.order_no) : order;
  }

  private async cancelled(client: Client, orderNo: string): Promise<Stored<Order>> {
    return (await cancelOrder(this.deps, client, orderNo))!;
  }
}
