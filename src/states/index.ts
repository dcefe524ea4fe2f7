/** Orders set up in a named state: an order at a given stage of its journey (shared by `trigger` and the Pact provider states), the provider-state setups and the triggered events. */

export { OrderSetups } from './setups.js';
export type { OrderTarget, SetupDeps } from './setups.js';
export { ProviderStates, PROVIDER_STATE_ORDER_CODE } from './provider-states.js';
export type { ProviderStateRequest, ProviderStateValues } from './provider-states.js';
export { fireTrigger, targetOfTrigger, TRIGGER_EVENTS } from './trigger.js';
export type { Triggered, TriggerDeps, TriggerEvent, TriggerRequest } from './trigger.js';
