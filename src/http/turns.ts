import { AsyncResource } from 'node:async_hooks';
import { MAX_SLICE_MS, WAITING_PER_CLIENT, domainMessages, TooManyRequests } from '../shared/index.js';
// Taken when the module loads: a test suite that fakes the timers afterwards (vitest's
// useFakeTimers fakes setImmediate) must not leave every request waiting for its turn.
const { setImmediate } = globalThis;
const now = performance.now.bind(performance);

/**
 * The loop time (ms) a turn is counted as at least: turns of cheaper requests (a
 * tracking read, a 1-item create) count the same, so those clients take turns one
 * request each, in order; a dearer one counts what it took.
 */
export const TURN_QUANTUM_MS = 1;

/** A request waiting for its turn: what lets it go, its body's size, and since when it waits (performance.now). */
interface Waiting {
  go: () => void;
  bytes: number;
  since: number;
}

/** A client's waiting requests, first come first, and the bytes of their bodies together. */
interface Queue {
  requests: Waiting[];
  bytes: number;
}

/**
 * Authenticated requests served in turns between clients, so that one partner's load
 * test does not make another partner's requests wait behind it.
 *
 * Node reads every request that is ready in one pass over the sockets and, without
 * this, serves each as it is read: a partner with a hundred connections open then puts
 * a hundred requests ahead of another partner's one, every pass. Here a request waits
 * for its turn once its client is known, and the waiting requests are let go one at a
 * time, for a slice of `sliceMs`; then the event loop reads the sockets again, so a
 * request that arrives meanwhile is among the next ones served rather than after
 * everything already read.
 *
 * Turns are shared by the loop time they take, not by their number (start-time fair
 * queuing): each client has the time its turns have taken so far (each counted as at
 * least TURN_QUANTUM_MS), and the next request let go is the first of the waiting client
 * that has had the least, a client that begins waiting starting from where the one being
 * served started (no credit for having been away). So clients of cheap requests take
 * turns one request each, in the order they began waiting, the one served going to the
 * back; a client whose 100-item creates take 30 ms each gets one in for about thirty of
 * another's 1 ms requests, not one for one. The times are forgotten whenever no request
 * waits.
 *
 * A request's turn lasts while it runs synchronously and through its promise
 * continuations (validation, the store, the answer written): on the embedded store
 * that is nearly all of its work. Work it waits for on a timer or on I/O (a latency
 * fault, a PostgreSQL statement) goes on beside later turns: a latency fault takes a
 * turn again when its wait is over (see `OperationInput.turn`).
 *
 * The slice is as long as the scheduler's longest slice of the loop (MAX_SLICE_MS), as due jobs take
 * turns as long as the requests' between theirs, and it is checked after each request,
 * so a slice overruns it by at most one request's work. A shorter slice serves a waiting
 * client little sooner and costs the busy clients' throughput (see
 * docs/performance-notes.md).
 */
export class FairTurns {
  /** Each waiting client's requests, first come first; clients in the order of their next turn among equals. */
  private readonly waiting = new Map<string, Queue>();
  /** The loop time (ms, from a common start) each client's turns have taken so far: where its next turn starts. */
  private readonly used = new Map<string, number>();
  /** Where the turn being served (or last served) started: a client beginning to wait starts here. */
  private virtualNow = 0;
  /** The turn being served: its client, when it began (performance.now), and the time charged to others meanwhile (see `charge`). */
  private turnClient = '';
  private turnStarted = 0;
  private turnRunning = false;
  private chargedMeanwhile = 0;
  /** Requests are being let go, or a slice is scheduled to. */
  private scheduled = false;
  private sliceStarted = 0;
  // Bound to the context the turns were made in, not that of the request that happened to start a slice.
  private readonly startSlice = AsyncResource.bind((): void => {
    this.sliceStarted = now();
    this.forgetIdle();
    this.letOneGo();
  });
  private readonly afterTurn = AsyncResource.bind((): void => {
    const ended = now();
    const took = ended - this.turnStarted - this.chargedMeanwhile;
    this.used.set(this.turnClient, this.startOf(this.turnClient) + Math.max(this.quantumMs, took));
    this.turnRunning = false;
    this.chargedMeanwhile = 0;
    if (ended - this.sliceStarted < this.sliceMs) this.letOneGo();
    else setImmediate(this.startSlice);
  });
  // A tick queued from a microtask runs once the microtask queue is empty: once the
  // request let go has done its synchronous part and its promise continuations.
  private readonly queueAfterTurn = AsyncResource.bind((): void => process.nextTick(this.afterTurn));

  constructor(
    private readonly sliceMs = MAX_SLICE_MS,
    private readonly waitingPerClient = WAITING_PER_CLIENT,
    /** Told how long (ms) each request waited, as its turn comes (the metrics). */
    private readonly onTurn?: (waitedMs: number) => void,
    /** The least a turn counts as (ms): see TURN_QUANTUM_MS. A huge one makes every turn count the same: one request each. */
    private readonly quantumMs = TURN_QUANTUM_MS,
  ) {}

  /**
   * Resolves when it is the client's request's turn. Rejects with TooManyRequests when
   * the client's waiting requests are at `waitingPerClient` already, or would pass its
   * bytes with this one's `bytes` of body (`capped: false`: a request that has had a
   * turn before, taking another, is never refused).
   */
  turn(clientId: string, { capped = true, bytes = 0 }: { capped?: boolean; bytes?: number } = {}): Promise<void> {
    const queue = this.waiting.get(clientId);
    const most = this.waitingPerClient;
    if (capped && queue !== undefined && (queue.requests.length >= most.requests || queue.bytes + bytes > most.bytes)) {
      return Promise.reject(new TooManyRequests(domainMessages.tooManyWaiting(most.requests, most.bytes), 1));
    }
    return new Promise((go) => {
      const waiting = { go, bytes, since: now() };
      if (queue) {
        queue.requests.push(waiting);
        queue.bytes += bytes;
      } else {
        this.waiting.set(clientId, { requests: [waiting], bytes });
      }
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.startSlice);
      }
    });
  }

  /**
   * Counts `ms` of loop time the client's request took outside its turn (its observers,
   * the journal's copy of its body, once it closed) as its own; if another client's turn
   * is running meanwhile, that one is not counted those `ms`.
   */
  charge(clientId: string, ms: number): void {
    if (!(ms > 0)) return;
    // During the client's own turn the time is in that turn already.
    if (this.turnRunning && clientId === this.turnClient) return;
    if (this.turnRunning) this.chargedMeanwhile += ms;
    // With no one waiting nothing is owed (see letOneGo); a client alone pays nothing.
    if (this.waiting.size === 0 && !this.turnRunning) return;
    this.used.set(clientId, this.startOf(clientId) + ms);
  }

  /** Where the client's next turn starts: the time its turns have taken, or where the one served started if that is later. */
  private startOf(clientId: string): number {
    return Math.max(this.used.get(clientId) ?? 0, this.virtualNow);
  }

  /**
   * Lets the first waiting request go of the client whose next turn starts first (the
   * first in order among equals); the client goes to the back if more of its requests wait.
   */
  private letOneGo(): void {
    let clientId: string | undefined;
    let queue: Queue | undefined;
    let start = Infinity;
    for (const [id, waiting] of this.waiting) {
      const at = this.startOf(id);
      if (at < start) [clientId, queue, start] = [id, waiting, at];
    }
    if (clientId === undefined || queue === undefined) {
      this.scheduled = false;
      // No one waits: no one is owed anything.
      this.used.clear();
      this.virtualNow = 0;
      return;
    }
    this.waiting.delete(clientId);
    this.virtualNow = start;
    this.turnClient = clientId;
    this.turnStarted = now();
    this.turnRunning = true;
    const { go, bytes, since } = queue.requests.shift()!;
    queue.bytes -= bytes;
    go();
    this.onTurn?.(now() - since);
    if (queue.requests.length > 0) this.waiting.set(clientId, queue);
    queueMicrotask(this.queueAfterTurn);
  }

  /** Drops the times of clients that do not wait and would start where the one served did anyway, so `used` stays as big as the clients waiting lately (once a slice). */
  private forgetIdle(): void {
    if (this.used.size <= this.waiting.size + 64) return;
    for (const [id, at] of this.used) if (at <= this.virtualNow && !this.waiting.has(id)) this.used.delete(id);
  }
}
