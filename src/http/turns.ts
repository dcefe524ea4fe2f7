/**
 * Authenticated requests served in turns between clients, so that one partner's load
 * test does not make another partner's requests wait behind it.
 *
 * Node reads every request that is ready in one pass over the sockets and, without
 * this, serves each as it is read: a partner with a hundred connections open then puts
 * a hundred requests ahead of another partner's one, every pass. Here a request only
 * waits for its turn once its client is known: the pass reads and authenticates them
 * all (cheap), and then they are served in rounds, one request of each waiting client
 * per round, clients in the order they began waiting. Rounds follow each other for
 * `sliceMs`, then the event loop reads the sockets again, so a request that arrives
 * meanwhile is served in the next round rather than after everything already read.
 *
 * The slice is as long as the scheduler's longest turn (MAX_TURN_MS), as the jobs take
 * turns as long as the requests' between theirs. Measured with four partners' 10-item
 * creates on 100 connections and a fifth partner's create every 500 ms (2 cores):
 * without turns the fifth partner's creates took 137 ms (median), with 15 ms slices
 * 51 ms; 8 ms slices gave 49 ms but let through 43% fewer of the four's creates, and a
 * single client's 10-item creates a p99 half as long again.
 *
 * A round ends when the requests it let go have done their synchronous work and their
 * promise continuations (validation, the store, the answer written), which is where a
 * request's time goes; work they wait for on I/O goes on beside later rounds.
 */
export class FairTurns {
  /** Each waiting client's requests, first come first; clients in the order of their next turn. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** A pass over the queues is due (set while one runs or is scheduled). */
  private scheduled = false;
  private sliceStarted = 0;

  constructor(private readonly sliceMs = 15) {}

  /** Resolves when it is the client's request's turn to be served. */
  turn(clientId: string): Promise<void> {
    return new Promise((resolve) => {
      const queue = this.waiting.get(clientId);
      if (queue) queue.push(resolve);
      else this.waiting.set(clientId, [resolve]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.startSlice);
      }
    });
  }

  private readonly startSlice = (): void => {
    this.sliceStarted = performance.now();
    this.round();
  };

  /** Lets one request of each waiting client go; a client with more waits at the back. */
  private round(): void {
    for (const clientId of [...this.waiting.keys()]) {
      const queue = this.waiting.get(clientId)!;
      this.waiting.delete(clientId);
      queue.shift()!();
      if (queue.length > 0) this.waiting.set(clientId, queue);
    }
    // The continuations of the requests let go run as microtasks; a tick queued from a
    // microtask runs once that queue is empty, that is once they have done their part.
    queueMicrotask(() => process.nextTick(this.afterRound));
  }

  private readonly afterRound = (): void => {
    if (this.waiting.size === 0) {
      this.scheduled = false;
      return;
    }
    if (performance.now() - this.sliceStarted < this.sliceMs) this.round();
    else setImmediate(this.startSlice);
  };
}
