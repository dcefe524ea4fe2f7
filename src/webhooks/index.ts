/** Webhooks: the outbox, signed and retried attempts, recovery after an outage, endpoints, chaos modes and the target policy. */

export { webhookBannerLine } from './banner.js';
export { chaosHeaderModes, unknownChaos } from './chaos.js';
export type { AttemptObserver } from './deps.js';
export { RESUME_SLICE, WebhookDispatcher } from './dispatcher.js';
export { DISABLED_BY_API, listenerTakesNoUrl, MAX_ENDPOINTS } from './endpoint-change.js';
export type { EndpointInput, EndpointPatch } from './endpoint-change.js';
export { WebhookEndpoints, admits, endpointOf } from './endpoints.js';
export type { Endpoint } from './endpoints.js';
export { MAX_REDELIVERED_ATTEMPTS } from './manual.js';
export type { Recovered, RecoverWindow } from './recover.js';
export { webhookMessages } from './messages.js';
export { scheduleStoredAttempts } from './migrate.js';
export { DEFAULT_RETRIES, parseRetries } from './retry.js';
export { isSecret, wrongSecret } from './secret.js';
export { send } from './send.js';
export type { SendResult } from './send.js';
export { TargetGuard } from './target-guard.js';
export type { Resolve } from './target-guard.js';
export { checkConfiguredUrl, parseTargetPolicy } from './targets.js';
export type { Refusal, TargetPolicy } from './targets.js';
export { deliveryView, endpointView, webhookEndpointView } from './views.js';
export { takesAttempts, takesDeliveries } from './live.js';
export { LISTENER_EXPIRY_JOB, Listeners, MAX_LISTENERS, listenRequest } from './listeners.js';
export { HANDOFF_CUT, reachedReceiver, signedHeaders } from './relay.js';
export type { ListenerRelay, RelayedAttempt, RelayResult } from './relay.js';
export { asJsonWithin, EXCERPT_BYTES } from './send.js';
