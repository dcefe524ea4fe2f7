import { MAX_SLICE_MS, SLICE_MS } from '../shared/index.js';

/**
 * The due jobs' slices of the event loop: how long the scheduler's drains run batches
 * before they let the requests waiting in (wall ms). A slice lasts as long as the event
 * loop's other work took between the last two slices, from SLICE_MS to MAX_SLICE_MS, so
 * under load due work and requests share the loop about half and half. Every drain running
 * at once (the timer's, clients' advances) shares one slice and one wait, so drains do not
 * add their slices up; a slice ends with the batches running when it is spent (a batch is
 * up to 32 jobs).
 *
 * Yielding after every batch would run one batch per pass of the loop, however much
 * request work that pass held, and under a load of creates AWB generation would fall ever
 * further behind; a slice as long as the other work keeps it in step.
 */
export class LoopSlices {
  /** The slice the drains share: when it began and how long it may run. */
  private slice: { began: number; budget: number };
  /** The one wait for the next slice, while the drains wait for it. */
  private next: Promise<void> | undefined;

  constructor(private readonly wallClock: () => number) {
    this.slice = { began: wallClock(), budget: SLICE_MS };
  }

  /**
   * Waits for the jobs' next slice once this one is spent; every drain waits on the same
   * one. The next slice may run as long as the loop's other work took meanwhile, within bounds.
   */
  async taken(): Promise<void> {
    if (this.wallClock() - this.slice.began < this.slice.budget) return;
    this.next ??= new Promise<void>((resolve) => {
      const asked = this.wallClock();
      setImmediate(() => {
        const began = this.wallClock();
        this.slice = { began, budget: Math.min(MAX_SLICE_MS, Math.max(SLICE_MS, began - asked)) };
        this.next = undefined;
        resolve();
      });
    });
    await this.next;
  }
}
