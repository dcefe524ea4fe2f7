import { ManualClock, RealClock, type Clock } from './clock.js';
import { MinHeap } from './heap.js';

/** Runs one due job. `at` is when it was due: use it, not the clock, for timestamps. */
export type JobHandler = (key: string, at: number) => Promise<void> | void;

export interface SchedulerOptions {
  /** How many jobs due at the same moment run at once. */
  concurrency?: number;
  onError?: (error: unknown, kind: string, key: string) => void;
}

interface Entry {
  at: number;
  kind: string;
  key: string;
}

/**
 * The one owner of every due time. The due times themselves live in the store with
 * their records; at start each service hands its pending ones to `schedule`, so a
 * restart resumes them, and jobs that fell due while the sandbox was stopped run at
 * once with their original due time.
 *
 * With a real clock a single unref'd timer waits for the earliest job; with a manual
 * clock nothing runs until `advance`.
 */
export class Scheduler {
  private readonly heap = new MinHeap<Entry>();
  private readonly due = new Map<string, number>();
  private readonly handlers = new Map<string, JobHandler>();
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    readonly clock: Clock,
    private readonly options: SchedulerOptions = {},
  ) {}

  on(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /** Runs job (kind, key) at `at`, replacing any earlier schedule of the same job. */
  schedule(kind: string, key: string, at: number): void {
    this.due.set(`${kind}\u0000${key}`, at);
    this.heap.push({ at, kind, key });
    this.arm();
  }

  cancel(kind: string, key: string): void {
    this.due.delete(`${kind}\u0000${key}`);
  }

  /** When the job is due, or undefined when it is not scheduled. */
  dueAt(kind: string, key: string): number | undefined {
    return this.due.get(`${kind}\u0000${key}`);
  }

  get pending(): number {
    return this.due.size;
  }

  /** The earliest due time of a live job, or undefined. */
  nextDue(): number | undefined {
    let min: number | undefined;
    for (const at of this.due.values()) if (min === undefined || at < min) min = at;
    return min;
  }

  /** Runs every job due now (and those they make due), then resolves. */
  runDue(): Promise<void> {
    return this.exclusive(() => this.drain(this.clock.now()));
  }

  /**
   * Moves a manual clock on by `ms`, running every job that falls due on the way at
   * its own time, in order; resolves when all of them have run.
   */
  advance(ms: number): Promise<void> {
    const clock = this.clock;
    if (!(clock instanceof ManualClock)) throw new Error('advance needs a manual clock');
    return this.exclusive(async () => {
      const target = clock.now() + ms;
      await this.drain(target, (at) => clock.set(at));
      clock.set(target);
    });
  }

  /** Stops the timer and waits for running jobs; nothing runs afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.running.then(work, work);
    this.running = next.catch(() => undefined);
    return next;
  }

  private async drain(until: number, moveTo?: (at: number) => void): Promise<void> {
    for (;;) {
      const batch = this.takeDueBatch(until);
      if (batch.length === 0) return;
      moveTo?.(batch[0]!.at);
      await this.runBatch(batch);
    }
  }

  /** Pops every live entry due at the earliest due time not after `until`. */
  private takeDueBatch(until: number): Entry[] {
    const batch: Entry[] = [];
    while (!this.stopped) {
      const top = this.heap.peek();
      if (!top || top.at > until) break;
      if (batch.length > 0 && top.at !== batch[0]!.at) break;
      this.heap.pop();
      const id = `${top.kind}\u0000${top.key}`;
      if (this.due.get(id) !== top.at) continue; // replaced or cancelled
      this.due.delete(id);
      batch.push(top);
    }
    return batch;
  }

  private async runBatch(batch: Entry[]): Promise<void> {
    const limit = this.options.concurrency ?? 32;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batch.length) {
        const entry = batch[next++]!;
        try {
          await this.handlers.get(entry.kind)?.(entry.key, entry.at);
        } catch (error) {
          this.options.onError?.(error, entry.kind, entry.key);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, batch.length) }, worker));
  }

  private arm(): void {
    if (this.stopped || !(this.clock instanceof RealClock)) return;
    const top = this.heap.peek();
    if (!top) return;
    if (this.timer && this.armedAt <= top.at) return; // already waiting for this one or an earlier one
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = top.at;
    const delay = Math.min(this.clock.realDelayUntil(top.at), 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.runDue()
        .catch((error: unknown) => this.options.onError?.(error, 'scheduler', 'runDue'))
        .finally(() => this.arm());
    }, delay);
    this.timer.unref();
  }
}
