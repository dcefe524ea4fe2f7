/**
 * How long a replica holds journal entries and report counts before it writes them, at
 * most: what one replica wrote is seen by the others within this interval and one
 * statement's time (the manual promises a quarter of a second).
 */
export const BATCH_INTERVAL_MS = 100;

interface Held<T> {
  item: T;
  written: () => void;
  failed: (error: unknown) => void;
}

/**
 * Items written in batches: an item waits at most `intervalMs` (or until `most` wait),
 * then every item held goes in one call of `write`, one call at a time, in the order
 * they were added. An item's promise resolves once its batch is written, so whoever
 * waits for it reads it back; `flush` writes what is held now without waiting for the
 * interval (a read through this replica, close).
 *
 * @example
 *   const batches = new IntervalBatches<Row>((rows) => insertAll(rows), { intervalMs: 100, most: 256 });
 *   await batches.add(row); // written with whatever else came within the interval
 */
export class IntervalBatches<T> {
  private held: Array<Held<T>> = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    /** Writes the items; may answer, per item, the error that kept it out (undefined: written). */
    private readonly write: (items: T[]) => Promise<ReadonlyArray<unknown> | void>,
    private readonly options: { intervalMs: number; most: number },
  ) {}

  /** How many items wait for their batch. */
  get waiting(): number {
    return this.held.length;
  }

  add(item: T): Promise<void> {
    return new Promise((written, failed) => {
      this.held.push({ item, written, failed });
      if (this.held.length >= this.options.most) void this.flush();
      else this.arm();
    });
  }

  /** Writes everything held now (after the batch being written, if any); resolves when it is written or failed. */
  async flush(): Promise<void> {
    this.disarm();
    while (this.writing) await this.writing;
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    this.writing = this.writeBatch(batch).finally(() => {
      this.writing = undefined;
    });
    await this.writing;
  }

  /** Resolves when nothing is held or being written (close waits for it). */
  async drained(): Promise<void> {
    while (this.writing || this.held.length > 0) await this.flush();
  }

  private async writeBatch(batch: Array<Held<T>>): Promise<void> {
    try {
      const errors = await this.write(batch.map((held) => held.item));
      batch.forEach((held, i) => (errors?.[i] === undefined ? held.written() : held.failed(errors[i])));
    } catch (error) {
      for (const held of batch) held.failed(error);
    }
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.intervalMs);
    // A held batch never keeps the process alive: close flushes it.
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
