import type { FaultAction } from '../records/index.js';
import type { OperationInput } from '../requests/index.js';

const applied = new WeakMap<OperationInput, FaultAction>();

/** Notes the action of the fault rule applied to a request. */
export const noteApplied = (input: OperationInput, action: FaultAction): void => void applied.set(input, action);

/** The action of the fault rule applied to a request, if one was (the readiness report reads it once the request has closed). */
export const appliedFault = (input: OperationInput): FaultAction | undefined => applied.get(input);
