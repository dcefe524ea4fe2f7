import type { Order } from './order.js';

/** Something that happened to an order that a client may be told about by webhook. */
export type SandboxEventType = 'awb.generated' | 'awb.failed' | 'order.cancelled';
/** Every event a client may be told about, as an endpoint's filter names them. */
export const SANDBOX_EVENT_TYPES: readonly SandboxEventType[] = ['awb.generated', 'awb.failed', 'order.cancelled'];

export interface SandboxEvent {
  type: SandboxEventType;
  order: Order;
  /** Sandbox time of the event (epoch ms). */
  at: number;
}
