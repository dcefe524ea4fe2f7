import type { Fixtures } from '../fixtures/index.js';
import { RuleViolation } from '../shared/index.js';
import type { OrderTarget } from './setups.js';

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
  const scenario = fixtures.scenarios.get(scenarioName);
  if (!scenario) throw new RuleViolation([{ field: 'scenario', message: `must be one of: ${[...fixtures.scenarios.keys()].join(', ')}` }]);
  if (orderScenario === undefined && event !== 'tracking.step' && (scenario.awb === 'fails') !== (event === 'awb.failed')) {
    throw new RuleViolation([{ field: 'scenario', message: `${scenarioName} ${scenario.awb === 'fails' ? 'fails' : 'generates'} the AWB: ${event} needs a scenario that ${event === 'awb.failed' ? 'fails' : 'generates'} it` }]);
  }
  if (event === 'awb.generated') return { stage: 'awb_generated', scenario: scenarioName };
  if (event === 'awb.failed') return { stage: 'awb_failed', scenario: scenarioName };
  if (event === 'order.cancelled') return { stage: 'cancelled', scenario: scenarioName };
  const keys = scenario.steps.map((s) => s.key);
  const given = request.to_step;
  const step = typeof given === 'number' || (typeof given === 'string' && /^\d+$/.test(given)) ? keys[Number(given) - 1] : given;
  if (step === undefined || !keys.includes(step)) throw new RuleViolation([{ field: 'to_step', message: `must be a step of scenario ${scenarioName} (its key, or its number from 1): ${keys.join(', ') || 'it has none'}` }]);
  return { stage: 'at_step', scenario: scenarioName, step };
}
