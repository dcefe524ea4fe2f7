/** What FairGate rejects with when a permit did not come free within the wait: pg-pool's own message for the same wait. */
export class PermitTimeout extends Error {
  constructor() {
    super('timeout exceeded when trying to connect');
    this.name = 'PermitTimeout';
  }
}

/** Gives a permit back; a second call does nothing. */
export type Release = () => void;

/** An acquisition waiting for a permit: what grants it, and its timer. */
interface Waiter {
  grant: (release: Release) => void;
  timer: NodeJS.Timeout;
}

/**
 * Permits to a pool's connections (as many as it has), handed out fairly between lanes:
 * while every permit is taken, a permit given back goes to the next waiting lane's first
 * waiter, lanes in the order of their next turn (one that has more waiting goes to the
 * back), waiters of one lane first come first. pg-pool serves its waiters first come
 * first served: one client's hundred statements then ran before another client's one.
 *
 * A waiter gives up after `timeoutMs`, rejected with a PermitTimeout, and holds nothing.
 *
 * @example
 * const gate = new FairGate(10);
 * const release = await gate.acquire('client-a', 5_000);
 * try { await work(); } finally { release(); }
 */
export class FairGate {
  private free: number;
  /** Each waiting lane's waiters, first come first; lanes in the order of their next turn. */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new RangeError(`A gate needs a positive whole number of permits, not ${capacity}.`);
    this.free = capacity;
  }

  /** Permits taken now. */
  get inUse(): number {
    return this.capacity - this.free;
  }

  /** Resolves with the release of a permit for `lane`; rejects with a PermitTimeout when none came within `timeoutMs`. */
  acquire(lane: string, timeoutMs: number): Promise<Release> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((grant, reject) => {
      const waiter: Waiter = {
        grant,
        timer: setTimeout(() => {
          this.forget(lane, waiter);
          reject(new PermitTimeout());
        }, timeoutMs),
      };
      const queue = this.waiting.get(lane);
      if (queue) queue.push(waiter);
      else this.waiting.set(lane, [waiter]);
    });
  }

  /** Runs `fn` holding a permit of `lane`, and gives it back however `fn` ends. */
  async run<T>(lane: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(lane, timeoutMs);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.handOn();
    };
  }

  /** A permit came back: to the next lane's first waiter (the lane to the back if more of it wait), or free. */
  private handOn(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.free += 1;
      return;
    }
    const [lane, queue] = next.value;
    this.waiting.delete(lane);
    const waiter = queue.shift()!;
    if (queue.length > 0) this.waiting.set(lane, queue);
    clearTimeout(waiter.timer);
    waiter.grant(this.releaser());
  }

  private forget(lane: string, waiter: Waiter): void {
    const queue = this.waiting.get(lane);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(lane);
  }
}
