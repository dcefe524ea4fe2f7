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
 * first served, where one client's many waiting statements would all run before another
 * client's one.
 *
 * One lane never holds every permit (of two or more): the last one free is kept for
 * another lane, so a client whose statements hold their connections long (the grants
 * above are fair in number, not in time held) cannot make another client's request
 * wait for the first of them to end.
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
  /** Permits each lane holds (lanes holding none are not listed). */
  private readonly held = new Map<string, number>();
  /** The most permits one lane may hold: all but one, or the one there is. */
  readonly perLane: number;

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new RangeError(`A gate needs a positive whole number of permits, not ${capacity}.`);
    this.free = capacity;
    this.perLane = Math.max(1, capacity - 1);
  }

  /** Permits taken now. */
  get inUse(): number {
    return this.capacity - this.free;
  }

  /** Resolves with the release of a permit for `lane`; rejects with a PermitTimeout when none came within `timeoutMs`. */
  acquire(lane: string, timeoutMs: number): Promise<Release> {
    if (this.free > 0 && this.mayTake(lane) && !this.waiting.has(lane)) {
      this.free -= 1;
      return Promise.resolve(this.take(lane));
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

  private mayTake(lane: string): boolean {
    return (this.held.get(lane) ?? 0) < this.perLane;
  }

  /** A permit of `lane`, counted as held until its release. */
  private take(lane: string): Release {
    this.held.set(lane, (this.held.get(lane) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const held = this.held.get(lane)! - 1;
      if (held === 0) this.held.delete(lane);
      else this.held.set(lane, held);
      this.handOn();
    };
  }

  /**
   * A permit came back: to the first waiter of the next lane that may take one (the lane
   * to the back if more of it wait), or free.
   */
  private handOn(): void {
    for (const [lane, queue] of this.waiting) {
      if (!this.mayTake(lane)) continue;
      this.waiting.delete(lane);
      const waiter = queue.shift()!;
      if (queue.length > 0) this.waiting.set(lane, queue);
      clearTimeout(waiter.timer);
      waiter.grant(this.take(lane));
      return;
    }
    this.free += 1;
  }

  private forget(lane: string, waiter: Waiter): void {
    const queue = this.waiting.get(lane);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(lane);
  }
}
