/** Fault rules per client: validation, matching against requests, the rules kept in the store, and the fault a request met. */

export { appliedFault, appliedRuleId, noteApplied } from './applied.js';
export { faultMessages } from './messages.js';
export { FaultRules } from './rules.js';
export { actsOnBrowser, checkRule, type BodyLimit } from './validate.js';
export { faultRuleView } from './view.js';
