import { NotFound } from '../domain/errors.js';
import { clientOf, json, type HandlerMap } from '../http/handler.js';
import { faultMessages } from './messages.js';
import type { FaultRules } from './rules.js';
import type { FaultRuleInput } from './types.js';
import { checkRule } from './validate.js';

/** `/__sandbox/faults`: create, list and delete the calling client's fault rules. */
export function faultHandlers(rules: FaultRules): HandlerMap {
  return {
    createFaultRule: (input) => json(201, rules.add(clientOf(input).id, checkRule(input.body as FaultRuleInput))),
    listFaultRules: (input) => json(200, { rules: rules.list(clientOf(input).id) }),
    deleteFaultRules: (input) => json(200, { success: true, removed: rules.clear(clientOf(input).id) }),
    deleteFaultRule: (input) => {
      const id = input.params.id!;
      if (!rules.remove(clientOf(input).id, id)) throw new NotFound(faultMessages.ruleNotFound(id));
      return json(200, { success: true, removed: 1 });
    },
  };
}
