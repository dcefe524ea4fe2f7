import type { Order } from './orders/types.js';

/** Something that happened to an order that a client may be told about by webhook. */
export type SandboxEventType = 'awb.generated' | 'awb.failed' | 'order.cancelled';

export interface SandboxEvent {
  type: SandboxEventType;
  order: Order;
  /** Sandbox time of the event (epoch ms). */
  at: number;
}

/** Where domain code reports events. */
export interface EventSink {
  emit(event: SandboxEvent): void;
}

/** Hands every event to its subscribers (the webhook outbox is one), synchronously. */
export class EventBus implements EventSink {
  private readonly listeners: Array<(event: SandboxEvent) => void> = [];

  subscribe(listener: (event: SandboxEvent) => void): void {
    this.listeners.push(listener);
  }

  emit(event: SandboxEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
