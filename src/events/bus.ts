import type { SandboxEvent } from '../records/index.js';
import type { Repositories } from '../store/index.js';

/** Where domain code reports events: inside the transaction that made them, so they are kept with it or not at all. */
export interface EventSink {
  emit(event: SandboxEvent, tx: Repositories): Promise<void>;
}

/** Hands every event to its subscribers (the webhook outbox is one), in the producer's transaction. */
export class EventBus implements EventSink {
  private readonly listeners: Array<(event: SandboxEvent, tx: Repositories) => Promise<void>> = [];

  subscribe(listener: (event: SandboxEvent, tx: Repositories) => Promise<void>): void {
    this.listeners.push(listener);
  }

  async emit(event: SandboxEvent, tx: Repositories): Promise<void> {
    for (const listener of this.listeners) await listener(event, tx);
  }
}
