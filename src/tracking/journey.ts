import type { DelayRange } from '../config/duration.js';
import type { Clock } from '../clock/clock.js';
import type { Scheduler } from '../clock/scheduler.js';
import type { EventSink } from '../events.js';
import type { Fixtures, LoadedScenario } from '../fixtures/load.js';
import type { IdFactory } from '../ids/factory.js';
import { draw } from '../ids/random.js';
import { secondsOf, type Order, type OrderStatus, type TrackingEntry } from '../orders/types.js';
import type { Store } from '../store/store.js';
import { renderHistory } from './render.js';

export const AWB_JOB = 'awb';
export const STEP_JOB = 'step';

const STATUS_BY_CODE: Record<string, OrderStatus> = {
  '1': 'picked_up',
  '2': 'delivered',
  '3': 'delivery_failed',
  '4': 'returned',
  '5': 'cancelled',
};

export interface JourneyDeps {
  store: Store;
  fixtures: Fixtures;
  ids: IdFactory;
  scheduler: Scheduler;
  clock: Clock;
  events: EventSink;
  /** Looks an order up by number (the store's orders collection). */
  order(orderNo: string): Order | undefined;
  /** Called when an order gets its AWB, so it can be found by it. */
  indexAwb(order: Order): void;
}

/**
 * Plays an order's scenario over sandbox time: the AWB job after the AWB delay, then
 * one job per scripted step. Each job writes its result into the order and schedules
 * the next, so the store always says what is due next.
 */
export class Journey {
  constructor(private readonly deps: JourneyDeps) {
    deps.scheduler.on(AWB_JOB, (orderNo, at) => this.awbDue(orderNo, at));
    deps.scheduler.on(STEP_JOB, (orderNo, at) => this.stepDue(orderNo, at));
  }

  /** When the AWB of a new order falls due, drawn from the delay range. */
  awbDueAt(orderNo: string, createdAt: number, delay: DelayRange): number {
    return createdAt + delay.min + Math.floor(draw(this.deps.ids.seed, `awb-delay:${orderNo}`) * (delay.max - delay.min + 1));
  }

  /** Hands an order's pending job, if any, to the scheduler (at create and at start-up). */
  resume(order: Order): void {
    if (order.status === 'created' && order.awb_due_at !== null) this.deps.scheduler.schedule(AWB_JOB, order.order_no, order.awb_due_at);
    const next = this.nextStepAt(order);
    if (next !== undefined) this.deps.scheduler.schedule(STEP_JOB, order.order_no, next);
  }

  /** When the next scripted step is due, or undefined when none is. */
  nextStepAt(order: Order): number | undefined {
    if (order.next_step === null || order.journey_start === null) return undefined;
    const offset = this.scenarioOf(order).offsets[order.next_step];
    return offset === undefined ? undefined : order.journey_start + offset;
  }

  /** The key of the next scripted step, or null. */
  nextStepKey(order: Order): string | null {
    return order.next_step === null ? null : (this.scenarioOf(order).steps[order.next_step]?.key ?? null);
  }

  /** The order's history as tracking shows it, newest first. */
  history(order: Order): TrackingEntry[] {
    return renderHistory(this.deps.fixtures, order, this.deps.ids.seed);
  }

  /** Generates the AWB now (control API). */
  async generateNow(order: Order): Promise<void> {
    if (order.status !== 'created') return;
    this.deps.scheduler.cancel(AWB_JOB, order.order_no);
    await this.awbDue(order.order_no, this.deps.clock.now());
  }

  /**
   * Plays the next step now, or every step up to the one named `key` (control API).
   * Later steps keep their spacing. Returns false when there is no such step to play.
   */
  async advance(order: Order, key?: string): Promise<boolean> {
    const scenario = this.scenarioOf(order);
    if (order.next_step === null || order.journey_start === null) return false;
    const target = key === undefined ? order.next_step : scenario.steps.findIndex((s) => s.key === key);
    if (target < order.next_step) return false;
    const now = this.deps.clock.now();
    order.journey_start = Math.min(order.journey_start, now - scenario.offsets[target]!);
    this.deps.scheduler.cancel(STEP_JOB, order.order_no);
    while (order.next_step !== null && order.next_step <= target) this.playStep(order, scenario, this.nextStepAt(order)!);
    this.save(order);
    return true;
  }

  /** Stops the journey: no AWB if none yet, no further steps. */
  stop(order: Order): void {
    this.deps.scheduler.cancel(AWB_JOB, order.order_no);
    this.deps.scheduler.cancel(STEP_JOB, order.order_no);
    order.next_step = null;
  }

  scenarioOf(order: Order): LoadedScenario {
    const scenario = this.deps.fixtures.scenarios.get(order.scenario);
    if (!scenario) throw new Error(`Order ${order.order_no} names an unknown scenario ${order.scenario}`);
    return scenario;
  }

  private awbDue(orderNo: string, at: number): void {
    const order = this.deps.order(orderNo);
    if (!order || order.status !== 'created') return;
    const scenario = this.scenarioOf(order);
    order.updated_at = at;
    if (scenario.awb === 'fails') {
      order.status = 'awb_failed';
      order.awb_error = scenario.awb_failure_reason ?? 'AWB generation failed';
      this.save(order);
      this.deps.events.emit({ type: 'awb.failed', order, at });
      return;
    }
    const courier = this.deps.fixtures.couriers.get(order.courier_code)!;
    order.awb = this.deps.ids.awb(courier);
    order.awb_generated_at = at;
    order.status = 'awb_generated';
    order.journey_start = at;
    order.next_step = scenario.steps.length > 0 ? 0 : null;
    this.deps.indexAwb(order);
    this.save(order);
    this.deps.events.emit({ type: 'awb.generated', order, at });
  }

  private stepDue(orderNo: string, at: number): void {
    const order = this.deps.order(orderNo);
    if (!order || order.next_step === null) return;
    this.playStep(order, this.scenarioOf(order), at);
    this.save(order);
  }

  private playStep(order: Order, scenario: LoadedScenario, at: number): void {
    const index = order.next_step!;
    const newest = order.history[0] ? secondsOf(order.history[0]) * 1000 : 0;
    const when = Math.max(at, newest);
    order.history.unshift({ step: index, at: when });
    const status = scenario.steps[index]!.status;
    if (status !== null) order.status = STATUS_BY_CODE[status] ?? order.status;
    else if (order.status === 'picked_up' || order.status === 'delivery_failed') order.status = 'in_transit';
    if (status === '5') {
      order.cancelled_at = when;
      this.deps.events.emit({ type: 'order.cancelled', order, at: when });
    }
    order.next_step = index + 1 < scenario.steps.length ? index + 1 : null;
    order.updated_at = when;
  }

  private save(order: Order): void {
    this.deps.store.put('orders', order.order_no, order);
    this.deps.store.commit();
    this.resume(order);
  }
}
