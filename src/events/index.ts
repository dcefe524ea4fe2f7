export { EventBus } from './bus.js';
export type { EventSink } from './bus.js';
