import { PodPhotos } from './pod-photos.js';
import { magicScenario } from './view.js';
import { Conflict, domainMessages, type DelayRange } from '../shared/index.js';
import type { Clocks } from '../clock/index.js';
import type { JobHandler, Scheduler } from '../jobs/index.js';
import type { EventSink } from '../events/index.js';
import type { Fixtures, LoadedScenario, StatusCode } from '../fixtures/index.js';
import type { IdFactory } from '../ids/index.js';
import { draw } from '../ids/index.js';
import { secondsOf, type ClaimedJob, type HistoryRecord, type Order, type OrderStatus, type Stored, type TrackingEntry } from '../records/index.js';
import type { Repositories, Storage } from '../store/index.js';
import { renderHistory } from './render.js';

/** The job kind of an order's AWB generation; the key is the order number. */
export const AWB_JOB = 'awb';
/** The job kind of an order's next scripted step; the key is the order number. */
export const STEP_JOB = 'step';

const STATUS_BY_CODE: Record<StatusCode, OrderStatus> = {
  '1': 'picked_up',
  '2': 'delivered',
  '3': 'delivery_failed',
  '4': 'returned',
  '5': 'cancelled',
};

export interface JourneyDeps {
  storage: Storage;
  fixtures: Fixtures;
  ids: IdFactory;
  clock: Clocks;
  events: EventSink;
  /** The key of the tags of POD photo names, kept in the store (see PodPhotos). */
  podSecret: string;
}

/**
 * Plays an order's scenario over sandbox time: the AWB job after the AWB delay, then
 * one job per scripted step. Each job writes its result into the order and schedules
 * the next in the same transaction, so the store always says what is due next.
 */
export class Journey {
  /** The addresses of the photos of POD scans (tagged, so that an AWB alone does not find one). */
  readonly photos: PodPhotos;

  constructor(private readonly deps: JourneyDeps) {
    this.photos = new PodPhotos(deps.podSecret, (awb) => magicScenario(deps.fixtures, awb) !== undefined);
  }

  /**
   * Registers this journey's jobs (AWB and steps) with the scheduler: local work, and
   * AWBs drawn in the order their jobs were claimed (a seeded sandbox gives each order
   * the same AWB).
   */
  attach(scheduler: Scheduler): void {
    // Each job ends in the transaction of what it did: one round trip less on PostgreSQL, and no window where it is done but still due.
    const completing =
      (due: (tx: Repositories, job: ClaimedJob, at: number) => Promise<unknown>): JobHandler =>
      (job, at) =>
        this.deps.storage.transaction(async (tx) => {
          await due(tx, job, at);
          await tx.jobs.complete(job);
          return 'completed' as const;
        });
    const awbDue = async (tx: Repositories, job: ClaimedJob, at: number) => {
      // What the AWB's webhook will read is asked for beside the order: one round trip on PostgreSQL.
      // Both end before the unit does; if the webhook's read failed, its error is the job's (a database then refuses the unit's later statements too).
      // As Promise.allSettled of the two would, without its result objects and callbacks (about a kilobyte a job).
      let prepareFailed = false;
      let prepareError: unknown;
      const prepared = this.deps.events.prepare(job.client_id, tx).catch((error: unknown) => {
        prepareFailed = true;
        prepareError = error;
      });
      let madeFailed = false;
      let madeError: unknown;
      try {
        await this.awbDue(tx, job.key, at);
      } catch (error) {
        madeFailed = true;
        madeError = error;
      }
      await prepared;
      if (prepareFailed) throw prepareError;
      if (madeFailed) throw madeError;
    };
    scheduler.register({ kind: AWB_JOB, run: completing(awbDue), drawsInOrder: true, oneTransaction: true });
    scheduler.register({ kind: STEP_JOB, run: completing((tx, job, at) => this.stepDue(tx, job.key, at)), oneTransaction: true });
  }

  /** When the AWB of a new order falls due, drawn from the delay range. */
  awbDueAt(orderNo: string, createdAt: number, delay: DelayRange): number {
    // A fixed delay draws nothing (the draw would add 0), sparing a hash per order.
    if (delay.max === delay.min) return createdAt + delay.min;
    return createdAt + delay.min + Math.floor(draw(this.deps.ids.seed, `awb-delay:${orderNo}`) * (delay.max - delay.min + 1));
  }

  /** Schedules an order's pending job, if any (at create, after each step, and when an older data file is migrated). */
  async schedule(tx: Repositories, order: Order): Promise<void> {
    if (order.status === 'created' && order.awb_due_at !== null) {
      await tx.jobs.schedule({ kind: AWB_JOB, key: order.order_no, client_id: order.client_id, due_at: order.awb_due_at });
    }
    const next = this.nextStepAt(order);
    if (next !== undefined) await tx.jobs.schedule({ kind: STEP_JOB, key: order.order_no, client_id: order.client_id, due_at: next });
  }

  /** When the next scripted step is due, or undefined when none is. */
  nextStepAt(order: Order): number | undefined {
    if (order.next_step === null || order.journey_start === null) return undefined;
    const offset = this.knownScenario(order)?.offsets[order.next_step];
    return offset === undefined ? undefined : order.journey_start + offset;
  }

  /**
   * The steps still to play with their due times, in order: from the next step on,
   * each at the journey start plus its offset. While the AWB is pending the journey
   * starts when it falls due, so the times are those the steps get if nothing moves it.
   */
  upcomingSteps(order: Order): { key: string; note: string; status: string | null; due_at: number }[] {
    const scenario = this.knownScenario(order);
    const pendingAwb = order.status === 'created' && order.awb_due_at !== null;
    const start = pendingAwb ? order.awb_due_at! : order.journey_start;
    const from = pendingAwb ? 0 : order.next_step;
    if (!scenario || start === null || from === null) return [];
    return scenario.steps.slice(from).map((step, i) => ({ key: step.key, note: step.note, status: step.status, due_at: start + scenario.offsets[from + i]! }));
  }

  /** The key of the next scripted step, or null. */
  nextStepKey(order: Order): string | null {
    return order.next_step === null ? null : (this.knownScenario(order)?.steps[order.next_step]?.key ?? null);
  }

  /** The order's history as tracking shows it, newest first. */
  history(order: Order): TrackingEntry[] {
    return renderHistory(this.deps.fixtures, order, this.deps.ids.seed);
  }

  /** Generates the AWB now (control API). Returns the order as it is afterwards. */
  generateNow(orderNo: string): Promise<Stored<Order> | undefined> {
    return this.deps.storage.transaction(async (tx) => {
      const order = await tx.orders.get(orderNo);
      if (order?.status !== 'created') return order;
      await tx.jobs.cancel(AWB_JOB, orderNo);
      return this.awbDue(tx, orderNo, this.deps.clock.of(order.client_id));
    });
  }

  /**
   * Plays the next step now, or every step up to the one named `key` (control API).
   * Later steps keep their spacing. The steps played on the way take their times back
   * from now at their spacing, but none before the AWB: the provider's tracking never
   * shows a scan before it (they are then squeezed between the AWB and now, in order).
   * Returns the order afterwards, or undefined when there is no such step to play (none
   * either when the order's scenario no longer has its next step: see scenarioOf).
   */
  advance(orderNo: string, key?: string): Promise<Stored<Order> | undefined> {
    return this.deps.storage.transaction(async (tx) => {
      const order = await tx.orders.get(orderNo);
      if (!order || order.next_step === null || order.journey_start === null) return undefined;
      const scenario = this.knownScenario(order);
      if (!scenario?.steps[order.next_step]) return undefined;
      const target = key === undefined ? order.next_step : scenario.steps.findIndex((s) => s.key === key);
      if (target < order.next_step) return undefined;
      const now = this.deps.clock.of(order.client_id);
      let changed: Order = { ...order, journey_start: Math.min(order.journey_start, now - scenario.offsets[target]!) };
      const earliest = order.awb_generated_at ?? order.created_at;
      // At their spacing back from now; when that puts the first before the AWB, squeezed between the AWB and now, in order.
      const first = this.nextStepAt(changed)!;
      const squeeze = first < earliest && now > earliest;
      while (changed.next_step !== null && changed.next_step <= target) {
        const due = this.nextStepAt(changed)!;
        changed = await this.playStep(tx, changed, scenario, squeeze ? earliest + Math.round(((due - first) / (now - first)) * (now - earliest)) : Math.max(due, earliest));
      }
      await tx.jobs.cancel(STEP_JOB, orderNo);
      return this.save(tx, changed as Stored<Order>);
    });
  }

  /**
   * How long before now an order must have been made for its journey to stand at the
   * step `key` now (0 for no step: the AWB alone). With OrdersService.create's `at` and
   * `layOut`, the journey is laid out backwards from the client's current time, so no
   * clock moves back.
   */
  spanTo(scenario: string, key?: string): number {
    const loaded = this.scenarioOf({ scenario, order_no: '(a new order)' });
    const index = key === undefined ? -1 : loaded.steps.findIndex((s) => s.key === key);
    return index < 0 ? 0 : loaded.offsets[index]!;
  }

  /**
   * Plays a fresh order's journey up to the step `key` (or only its AWB): the AWB (or its
   * failure) at the order's creation time, each step at its offset from it, as if the
   * time had passed; the next step stays due at its own time. The webhook of the AWB is
   * emitted as the AWB job would. Returns the order afterwards, as it is when it already
   * left `created` (nothing played then).
   */
  layOut(orderNo: string, key?: string): Promise<Stored<Order> | undefined> {
    return this.deps.storage.transaction(async (tx) => {
      const order = await tx.orders.get(orderNo);
      if (order?.status !== 'created') return order;
      await tx.jobs.cancel(AWB_JOB, orderNo);
      const made = await this.awbDue(tx, orderNo, order.created_at);
      if (made?.next_step == null || key === undefined) return made;
      const scenario = this.scenarioOf(made);
      const target = scenario.steps.findIndex((s) => s.key === key);
      let changed: Order = made;
      while (changed.next_step !== null && changed.next_step <= target) changed = await this.playStep(tx, changed, scenario, this.nextStepAt(changed)!);
      await tx.jobs.cancel(STEP_JOB, orderNo);
      return this.save(tx, changed as Stored<Order>);
    });
  }

  /** The order with its journey stopped (no AWB if none yet, no further steps), its jobs cancelled. */
  async stop(tx: Repositories, order: Stored<Order>): Promise<Stored<Order>> {
    await tx.jobs.cancel(AWB_JOB, order.order_no);
    await tx.jobs.cancel(STEP_JOB, order.order_no);
    return { ...order, next_step: null };
  }

  /**
   * The order's scenario; a Conflict saying so when the sandbox's scenarios no longer hold
   * it (its file was removed after the order was made). Such an order keeps what it played
   * and plays nothing more; the readers of a stored order take `knownScenario` instead.
   */
  scenarioOf(order: Pick<Order, 'scenario' | 'order_no'>): LoadedScenario {
    const scenario = this.knownScenario(order);
    if (!scenario) throw new Conflict(domainMessages.scenarioGone(order.order_no, order.scenario));
    return scenario;
  }

  /** The order's scenario, or undefined when its file was removed since the order was made. */
  knownScenario(order: Pick<Order, 'scenario'>): LoadedScenario | undefined {
    return this.deps.fixtures.scenarios.get(order.scenario);
  }

  private async awbDue(tx: Repositories, orderNo: string, at: number): Promise<Stored<Order> | undefined> {
    const order = await tx.orders.get(orderNo);
    if (!order || order.status !== 'created') return order;
    // A scenario removed since the order was made: the AWB still comes, with no step after it.
    const scenario = this.knownScenario(order);
    if (scenario?.awb === 'fails') {
      const failed = await this.save(tx, { ...order, updated_at: at, status: 'awb_failed', awb_error: scenario.awb_failure_reason ?? 'AWB generation failed' });
      await this.deps.events.emit({ type: 'awb.failed', order: failed, at }, tx);
      return failed;
    }
    const courier = this.deps.fixtures.couriers.get(order.courier_code)!;
    const generated = await this.save(tx, {
      ...order,
      updated_at: at,
      awb: await this.deps.ids.awb(tx, courier, order.client_id),
      awb_generated_at: at,
      status: 'awb_generated',
      journey_start: at,
      next_step: scenario && scenario.steps.length > 0 ? 0 : null,
    });
    await this.deps.events.emit({ type: 'awb.generated', order: generated, at }, tx);
    return generated;
  }

  private async stepDue(tx: Repositories, orderNo: string, at: number): Promise<void> {
    const order = await tx.orders.get(orderNo);
    if (!order || order.next_step === null) return;
    // A scenario removed or shortened since: the step is no more, and the journey ends where it stood.
    const scenario = this.knownScenario(order);
    if (!scenario?.steps[order.next_step]) return void (await this.save(tx, { ...order, next_step: null }));
    await this.save(tx, (await this.playStep(tx, order, scenario, at)) as Stored<Order>);
  }

  /** The order with its next step played at `at` (not yet saved). */
  private async playStep(tx: Repositories, order: Order, scenario: LoadedScenario, at: number): Promise<Order> {
    const index = order.next_step!;
    const newest = order.history[0] ? secondsOf(order.history[0]) * 1000 : 0;
    const when = Math.max(at, newest);
    const history: HistoryRecord[] = [{ step: index, at: when }, ...order.history];
    const code = scenario.steps[index]!.status;
    let status = order.status;
    if (code !== null) status = STATUS_BY_CODE[code as StatusCode] ?? status;
    else if (status === 'picked_up' || status === 'delivery_failed') status = 'in_transit';
    const played: Order = {
      ...order,
      history,
      status,
      next_step: index + 1 < scenario.steps.length ? index + 1 : null,
      updated_at: when,
      ...(code === '5' ? { cancelled_at: when } : {}),
    };
    if (code === '5') await this.deps.events.emit({ type: 'order.cancelled', order: played, at: when }, tx);
    return played;
  }

  private async save(tx: Repositories, order: Stored<Order>): Promise<Stored<Order>> {
    const saved = await tx.orders.update(order);
    await this.schedule(tx, saved);
    return saved;
  }
}
