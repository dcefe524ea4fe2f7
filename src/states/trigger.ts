import type { Client } from '../clients/index.js';
import { noSuchStep, stepNamed, type Fixtures } from '../fixtures/index.js';
import type { OrdersService } from '../orders/index.js';
import type { Delivery, Order, Stored, WebhookEventType } from '../records/index.js';
import { Conflict, domainMessages, NotFound, RuleViolation, within } from '../shared/index.js';
import type { Storage } from '../store/index.js';
import type { OrderSetups, OrderTarget } from './setups.js';

/**
 * What `POST /__sandbox/events/trigger` can fire: the three webhook events, and
 * `tracking.step`, which is no webhook of its own (the provider sends none for tracking):
 * it plays an order's journey up to `to_step`, with the AWB webhook on the way.
 */
export const TRIGGER_EVENTS = ['awb.generated', 'awb.failed', 'order.cancelled', 'tracking.step'] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

/** The trigger's body. */
export interface TriggerRequest {
  event?: string;
  order_no?: string;
  scenario?: string;
  /** A step's key, or its number (1 is the first step) in the scenario. */
  to_step?: string | number;
}

/**
 * The stage an order is taken to for a trigger. `orderScenario` is the existing order's
 * (undefined for a new order, whose scenario is `scenario`, or `awb_failed` for
 * `awb.failed`, or `defaultScenario`). Throws RuleViolation naming the field.
 */
export function targetOfTrigger(fixtures: Fixtures, request: TriggerRequest, orderScenario: string | undefined, defaultScenario: string): OrderTarget {
  const event = request.event as TriggerEvent;
  if (!TRIGGER_EVENTS.includes(event)) throw new RuleViolation([{ field: 'event', message: `must be one of: ${TRIGGER_EVENTS.join(', ')}` }], `Unknown event "${String(request.event)}".`);
  if (event !== 'tracking.step' && request.to_step !== undefined) throw new RuleViolation([{ field: 'to_step', message: 'goes with the event tracking.step only' }]);
  // An existing order keeps its scenario: one named for it must be that one, not be silently passed over.
  if (orderScenario !== undefined && request.scenario !== undefined && request.scenario !== orderScenario) {
    throw new RuleViolation([{ field: 'scenario', message: `must be the order's own scenario, ${orderScenario} (or left out)` }]);
  }
  const fallback = event === 'awb.failed' ? 'awb_failed' : defaultScenario;
  const scenarioName = request.scenario ?? orderScenario ?? fallback;
  // Named in a refusal as the caller may not know it: a scenario it did not send.
  const named = request.scenario === undefined && orderScenario === undefined && event !== 'awb.failed' ? `${scenarioName} (the client's default scenario; send scenario to choose another)` : scenarioName;
  const scenario = fixtures.scenarios.get(scenarioName);
  // An existing order whose scenario was removed since: it can still be cancelled, and has nothing more to play.
  if (!scenario && orderScenario !== undefined && event === 'order.cancelled') return { stage: 'cancelled', scenario: scenarioName };
  if (!scenario) throw new RuleViolation([{ field: 'scenario', message: `must be one of: ${[...fixtures.scenarios.keys()].join(', ')}` }]);
  if (orderScenario === undefined && event !== 'tracking.step' && (scenario.awb === 'fails') !== (event === 'awb.failed')) {
    throw new RuleViolation([{ field: 'scenario', message: `${named} ${scenario.awb === 'fails' ? 'fails' : 'generates'} the AWB: ${event} needs a scenario that ${event === 'awb.failed' ? 'fails' : 'generates'} it` }]);
  }
  if (event === 'awb.generated') return { stage: 'awb_generated', scenario: scenarioName };
  if (event === 'awb.failed') return { stage: 'awb_failed', scenario: scenarioName };
  if (event === 'order.cancelled') return { stage: 'cancelled', scenario: scenarioName };
  const keys = scenario.steps.map((s) => s.key);
  const given = request.to_step;
  if (given === undefined) throw new RuleViolation([{ field: 'to_step', message: `is required for tracking.step: a step of scenario ${named} (its key, or its number from 1): ${keys.join(', ') || 'it has none'}` }]);
  const step = stepNamed(keys, given);
  if (step === undefined) throw new RuleViolation([{ field: 'to_step', message: noSuchStep(named, keys, given) }]);
  return { stage: 'at_step', scenario: scenarioName, step };
}

/** What a trigger needs besides the fixtures: the orders, the setups, the deliveries and the clocks. */
export interface TriggerDeps {
  fixtures: Fixtures;
  orders: OrdersService;
  setups: OrderSetups;
  storage: Pick<Storage, 'deliveries'>;
  /**
   * On a manual clock, plays what is due now on the client's clock (the first attempts of
   * the new deliveries: nothing else plays them). Undefined on a real clock, whose timer
   * plays them beside the client's other due work: the trigger then waits for its own
   * deliveries' first attempts only (an advance would hold the client's other jobs until
   * each attempt in flight ended, and log them at their due times).
   */
  playDue?: (clientId: string) => Promise<void>;
  /** The client's time now (its clock). */
  now: (clientId: string) => number;
  /**
   * How long the answer waits for that, at most (the webhook timeout and a little more: a
   * first attempt's time): a client with thousands of deliveries due waited minutes for the
   * whole backlog. Past it the answer shows the deliveries as they stand; the rest plays on.
   */
  playDueWithinMs: number;
  defaultScenario: string;
}

/** What came of a trigger: the order as it now stands, the deliveries it made, and the one of the event fired. */
export interface Triggered {
  order: Stored<Order>;
  made: Stored<Delivery>[];
  /**
   * The delivery of the event fired, the least successful one when the client has several
   * endpoints (failed, then held, then a retry scheduled, then delivered); undefined when
   * none was made (an endpoint filter left it out, or the event has no webhook of its own).
   */
  own: Stored<Delivery> | undefined;
}

/** How far a delivery's status is from delivered: a trigger's outcome is its event's furthest. */
const SHORTFALL: Record<Delivery['status'], number> = { delivered: 0, pending: 1, paused: 2, failed: 3 };

/** The webhook event whose delivery is a trigger's outcome. */
const EVENT_OF: Record<OrderTarget['stage'], WebhookEventType | undefined> = { created: undefined, awb_generated: 'awb.generated', at_step: 'awb.generated', awb_failed: 'awb.failed', cancelled: 'order.cancelled' };

/** How often a trigger on a real clock looks whether its deliveries' first attempts were made. */
const FIRST_ATTEMPT_POLL_MS = 25;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A delivery whose first attempt is due by `now` and not made yet (in flight, or waiting its
 * turn), or acknowledged without the copies its chaos asks for yet (they follow in the same job).
 */
const awaitsFirstAttempt = (d: Delivery, now: number): boolean =>
  d.status === 'pending'
    ? d.attempts.length === 0 && d.next_attempt_at !== null && d.next_attempt_at <= now
    : d.status === 'delivered' && COPIES.some((chaos) => d.chaos.includes(chaos) && !d.attempts.some((a) => a.chaos === chaos));

/** The chaos modes that send copies of an acknowledged message (see WebhookAttempts.copies). */
const COPIES = ['duplicate', 'bad_signature'] as const;

/** Until no delivery `made` lists awaits its first attempt (a store that hangs is cut by the caller's bound), looking every FIRST_ATTEMPT_POLL_MS up to `deadline`. */
async function firstAttempts(made: () => Promise<Delivery[]>, now: () => number, deadline: number): Promise<void> {
  while ((await made()).some((d) => awaitsFirstAttempt(d, now())) && performance.now() < deadline) await sleep(FIRST_ATTEMPT_POLL_MS);
}

/**
 * Fires an event (`POST /__sandbox/events/trigger`): on a new fixture order, or takes the
 * client's own order there from where it stands; then waits for the first attempts of its
 * deliveries (on a manual clock by playing what is due now), so the answer can say how
 * they went.
 */
export async function fireTrigger(deps: TriggerDeps, client: Client, request: TriggerRequest): Promise<Triggered> {
  const { orders, setups, storage } = deps;
  const deliveriesOf = async (orderNo: string): Promise<Stored<Delivery>[]> => (await storage.deliveries.list(client.id, { limit: 100, order_no: orderNo, total: false })).items;
  const existing = request.order_no === undefined ? undefined : await orders.get(client, request.order_no);
  if (request.order_no !== undefined && !existing) throw new NotFound(domainMessages.orderNotFound(request.order_no));
  // Its scenario removed since it was made: a 409 saying so rather than a 400 on a field the caller may not have sent (a cancellation needs no scenario).
  const playsScenario = (TRIGGER_EVENTS as readonly unknown[]).includes(request.event) && request.event !== 'order.cancelled';
  if (existing && playsScenario && !deps.fixtures.scenarios.has(existing.scenario)) throw new Conflict(domainMessages.scenarioGone(existing.order_no, existing.scenario));
  const target = targetOfTrigger(deps.fixtures, request, existing?.scenario, client.scenario ?? deps.defaultScenario);
  const before = new Set(existing ? (await deliveriesOf(existing.order_no)).map((d) => d.id) : []);
  const set = existing ? await setups.take(client, existing, target) : await setups.make(client, target, 'sandbox-trigger');
  const madeOf = async (): Promise<Stored<Delivery>[]> => (await deliveriesOf(set.order_no)).filter((d) => !before.has(d.id));
  await within(deps.playDue ? deps.playDue(client.id) : firstAttempts(madeOf, () => deps.now(client.id), performance.now() + deps.playDueWithinMs), deps.playDueWithinMs);
  const order = (await orders.get(client, set.order_no)) ?? set;
  const made = await madeOf();
  const event = EVENT_OF[target.stage];
  const own = made.filter((d) => d.event === event).reduce<Stored<Delivery> | undefined>((worst, d) => (worst === undefined || SHORTFALL[d.status] > SHORTFALL[worst.status] ? d : worst), undefined);
  return { order, made, own };
}
