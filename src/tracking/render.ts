import { locate, type Fixtures, type LoadedScenario, type TEMPLATE_NAMES } from '../fixtures/index.js';
import { pick } from '../ids/index.js';
import { isPlayedStep, type Order, type PlayedStep, type TrackingEntry } from '../records/index.js';

/** The values a scenario's templates may use. */
export type TemplateContext = Record<(typeof TEMPLATE_NAMES)[number], string>;

const fill = (template: string, context: TemplateContext): string =>
  template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in context ? context[name as keyof TemplateContext] : whole));

function branchOf(fixtures: Fixtures, provinceId: string | undefined, fallback: string): string {
  const name = provinceId ? fixtures.branches[provinceId] : undefined;
  return typeof name === 'string' ? name : fallback;
}

/** Fills the templates of an order's scenario: facilities on the route from sender to receiver. */
export function contextOf(fixtures: Fixtures, order: Order, seed: string): TemplateContext {
  const from = locate(fixtures, order.sender.sender_addr_id);
  const to = locate(fixtures, order.item.receiver_addr_id);
  const zone = to?.province.zone ?? 'A';
  return {
    sender_name: order.sender.sender_name,
    receiver_name: order.item.receiver_name,
    courier_name: fixtures.couriers.get(order.courier_code)?.name ?? order.courier_code.toUpperCase(),
    courier_staff: pick(fixtures.staff, seed, `staff:${order.order_no}`),
    sender_city: from?.city.name ?? 'origin',
    receiver_city: to?.city.name ?? 'destination',
    origin_branch: branchOf(fixtures, from?.province.id, 'ORIGIN HUB'),
    transit_branch: fixtures.branches.transit[zone] ?? 'TRANSIT GATEWAY',
    destination_branch: branchOf(fixtures, to?.province.id, 'DESTINATION HUB'),
    receiver_address: order.item.receiver_address,
  };
}

/** The tracking entry of step `index` of a scenario, at `at` (epoch ms). */
export function renderStep(scenario: LoadedScenario, index: number, context: TemplateContext, at: number, awb: string): TrackingEntry {
  const step = scenario.steps[index]!;
  return {
    note: step.note,
    description: fill(step.description, context),
    branch: fill(step.branch, context),
    update_on: Math.floor(at / 1000),
    status: step.status,
    pod_photo: step.pod ? podPhotoPath(awb) : null,
  };
}

/**
 * The entry of a played step its scenario no longer has (the scenario's file was removed
 * or shortened since): its time is kept, its text and status are not known any more.
 */
export function lostStep(scenario: string, index: number, at: number): TrackingEntry {
  return { note: 'Scan', description: `Step ${index + 1} of scenario ${scenario}, which its file no longer holds`, branch: 'Not known', update_on: Math.floor(at / 1000), status: null, pod_photo: null };
}

/** Template values per order: they depend only on what the client sent, which never changes. */
const contexts = new WeakMap<Order, TemplateContext>();
/** A played step's rendered entry never changes either: render it once. */
const rendered = new WeakMap<PlayedStep, TrackingEntry>();

/** An order's history as tracking shows it, newest first, each played step rendered from its scenario. */
export function renderHistory(fixtures: Fixtures, order: Order, seed: string): TrackingEntry[] {
  return order.history.map((entry) => {
    if (!isPlayedStep(entry)) return entry;
    let done = rendered.get(entry);
    if (!done) {
      const scenario = fixtures.scenarios.get(order.scenario);
      if (!scenario?.steps[entry.step]) done = lostStep(order.scenario, entry.step, entry.at);
      else {
        let context = contexts.get(order);
        if (!context) contexts.set(order, (context = contextOf(fixtures, order, seed)));
        done = renderStep(scenario, entry.step, context, entry.at, order.awb ?? '');
      }
      rendered.set(entry, done);
    }
    return done;
  });
}

/** Where the sandbox serves the proof-of-delivery photo of an AWB. */
export const podPhotoPath = (awb: string): string => `/__sandbox/pod/${encodeURIComponent(awb)}.png`;
