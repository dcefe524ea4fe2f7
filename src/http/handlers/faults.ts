import { NotFound } from '../../shared/index.js';
import { clientOf, json, type HandlerMap } from '../handler.js';
import { faultMessages, faultRuleView, checkRule, type BodyLimit } from '../../faults/index.js';
import type { FaultRules } from '../../faults/index.js';
import type { FaultRuleInput } from '../../records/index.js';
import type { MatchableOperation } from '../../shared/index.js';

/** `/__sandbox/faults`: create, list and delete the calling client's fault rules (a rule's match checked against the served spec's `operations` and the body limit). */
export function faultHandlers(rules: FaultRules, operations: readonly MatchableOperation[], limits?: BodyLimit): HandlerMap {
  return {
    createFaultRule: async (input) => json(201, faultRuleView(await rules.add(clientOf(input).id, checkRule(input.body as FaultRuleInput, operations, limits)))),
    listFaultRules: async (input) => json(200, { rules: (await rules.list(clientOf(input).id)).map(faultRuleView) }),
    deleteFaultRules: async (input) => json(200, { success: true, removed: await rules.clear(clientOf(input).id) }),
    deleteFaultRule: async (input) => {
      const id = input.params.id!;
      if (!(await rules.remove(clientOf(input).id, id))) throw new NotFound(faultMessages.ruleNotFound(id));
      return json(200, { success: true, removed: 1 });
    },
  };
}
