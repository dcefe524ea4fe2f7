export { appliedFault, noteApplied } from './applied.js';
export { faultMessages } from './messages.js';
export { FaultRules } from './rules.js';
export { checkRule } from './validate.js';
