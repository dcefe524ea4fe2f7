import type { SandboxEvent } from '../records/index.js';
import type { Repositories } from '../store/index.js';

/** Where domain code reports events: inside the transaction that made them, so they are kept with it or not at all. */
export interface EventSink {
  emit(event: SandboxEvent, tx: Repositories): Promise<void>;
  /**
   * Asks now, in `tx`, for what emitting an event of this client there will read (the
   * webhook outbox reads the client's settings), so that a producer can ask for it beside
   * its own reads: on PostgreSQL they then go out in one round trip. Ends once those reads
   * have; a producer that never calls it loses only that round trip.
   */
  prepare(clientId: string, tx: Repositories): Promise<void>;
}

type Listener = (event: SandboxEvent, tx: Repositories) => Promise<void>;
type Preparer = (clientId: string, tx: Repositories) => Promise<unknown>;

/** Hands every event to its subscribers (the webhook outbox is one), in the producer's transaction. */
export class EventBus implements EventSink {
  private readonly listeners: Listener[] = [];
  private readonly preparers: Preparer[] = [];

  /** `prepare`, when given, asks for what `listener` will read of a client (see EventSink.prepare). */
  subscribe(listener: Listener, prepare?: Preparer): void {
    this.listeners.push(listener);
    if (prepare) this.preparers.push(prepare);
  }

  async emit(event: SandboxEvent, tx: Repositories): Promise<void> {
    for (const listener of this.listeners) await listener(event, tx);
  }

  async prepare(clientId: string, tx: Repositories): Promise<void> {
    // One preparer (the webhook outbox's), the usual case: its read awaited as it is, without the settling of a list.
    if (this.preparers.length === 1) {
      await this.preparers[0]!(clientId, tx);
      return;
    }
    // Every read ends before this does, so none outlives the producer's unit; the first failure is the caller's.
    // Each preparer through an async function: one that throws at once rejects its own promise, not the map (every read still starts now).
    const settled = await Promise.allSettled(this.preparers.map(async (prepare) => prepare(clientId, tx)));
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
