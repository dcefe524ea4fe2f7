import type { ClientRegistry } from '../clients/index.js';
import { orderIdentity, type Order } from '../records/index.js';
import type { Journey } from '../tracking/index.js';
import { withPhotoUrls, AWB_JOB } from '../tracking/index.js';
export const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** An order as the control API shows it: state, what is due next, history so far. */
export function orderState(order: Order, journey: Journey, baseUrl: string) {
  const awbDue = order.status === 'created' ? order.awb_due_at : null;
  const stepDue = journey.nextStepAt(order);
  const next =
    awbDue !== null
      ? { kind: AWB_JOB, step: null, due_at: iso(awbDue) }
      : stepDue !== undefined
        ? { kind: 'step', step: journey.nextStepKey(order), due_at: iso(stepDue) }
        : null;
  return {
    ...orderIdentity(order),
    scenario: order.scenario,
    status: order.status,
    awb: order.awb,
    awb_error: order.awb_error,
    created_at: iso(order.created_at),
    awb_due_at: iso(order.awb_due_at),
    awb_generated_at: iso(order.awb_generated_at),
    cancelled_at: iso(order.cancelled_at),
    next,
    upcoming: journey.upcomingSteps(order).map((step) => ({ ...step, due_at: iso(step.due_at) })),
    history: withPhotoUrls(journey.history(order), baseUrl, journey.photos),
    sender: order.sender,
    item: order.item,
  };
}
/**
 * The clients of the sandbox as an admin sees them (`GET /__sandbox/clients`): id,
 * name and the roles of its tokens, never the tokens themselves.
 */
export function clientList(registry: ClientRegistry) {
  return registry.clientIds.map((id) => {
    const tokens = registry.clients.filter((c) => c.id === id);
    return { id, name: registry.nameOf(id) ?? id, roles: [...new Set(tokens.map((c) => c.role))], tokens: tokens.length };
  });
}
