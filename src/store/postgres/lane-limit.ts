import { PermitTimeout } from './fair-gate.js';

/**
 * At most `perLane` runs at once per lane; the rest of a lane wait, first come first,
 * while other lanes go on. For the statements whose cost is the database's CPU rather
 * than a connection's time (a listing's count over a client's every order): the fair gate
 * shares connections between clients, but one client's many such statements at once,
 * each on a connection of its own, would share the database's cores among themselves and
 * leave another client's point reads waiting for one. A run that waited `waitMs` without
 * its turn gives up with a PermitTimeout, and holds nothing.
 *
 * @example
 * const listings = new LaneLimit(2);
 * await listings.run('client-a', () => db.query(countingListing));
 */
export class LaneLimit {
  /** Runs going on per lane (lanes running none are not listed). */
  private readonly running = new Map<string, number>();
  /** Each lane's waiting runs, first come first. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(readonly perLane: number) {
    if (!(Number.isInteger(perLane) && perLane > 0)) throw new RangeError(`A lane limit needs a positive whole number, not ${perLane}.`);
  }

  /** Runs `fn` once fewer than `perLane` runs of `lane` go on (waiting at most `waitMs`), and lets the lane's next go however it ends. */
  async run<T>(lane: string, fn: () => Promise<T>, waitMs = Infinity): Promise<T> {
    const running = this.running.get(lane) ?? 0;
    if (running < this.perLane) this.running.set(lane, running + 1);
    else await this.turn(lane, waitMs);
    try {
      return await fn();
    } finally {
      this.next(lane);
    }
  }

  /** Resolves when a run of `lane` hands this one its place; rejects with a PermitTimeout after `waitMs`, leaving the queue. */
  private turn(lane: string, waitMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const go = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = Number.isFinite(waitMs)
        ? setTimeout(() => {
            const queue = this.waiting.get(lane);
            const at = queue?.indexOf(go) ?? -1;
            if (at >= 0) queue!.splice(at, 1);
            if (queue?.length === 0) this.waiting.delete(lane);
            reject(new PermitTimeout());
          }, waitMs)
        : undefined;
      const queue = this.waiting.get(lane);
      if (queue) queue.push(go);
      else this.waiting.set(lane, [go]);
    });
  }

  /** Runs going on in `lane` now. */
  runningIn(lane: string): number {
    return this.running.get(lane) ?? 0;
  }

  /** A run of `lane` ended: its place goes to the lane's next waiting run, else is freed. */
  private next(lane: string): void {
    const queue = this.waiting.get(lane);
    const go = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(lane);
    if (go) return go();
    const running = (this.running.get(lane) ?? 1) - 1;
    if (running > 0) this.running.set(lane, running);
    else this.running.delete(lane);
  }
}
