/** Order events, emitted inside the transaction that made them, for their subscribers (the webhook outbox). */

export { EventBus } from './bus.js';
export type { EventSink } from './bus.js';
