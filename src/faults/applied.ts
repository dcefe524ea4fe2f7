import type { FaultAction, FaultRule } from '../records/index.js';
import type { OperationInput } from '../requests/index.js';

const applied = new WeakMap<OperationInput, Pick<FaultRule, 'id' | 'action'>>();

/** Notes the fault rule applied to a request. */
export const noteApplied = (input: OperationInput, rule: Pick<FaultRule, 'id' | 'action'>): void => void applied.set(input, rule);

/** The action of the fault rule applied to a request, if one was (the readiness report reads it once the request has closed). */
export const appliedFault = (input: OperationInput): FaultAction | undefined => applied.get(input)?.action;

/** The id of the fault rule applied to a request, if one was (its log line names it). */
export const appliedRuleId = (input: OperationInput): string | undefined => applied.get(input)?.id;
