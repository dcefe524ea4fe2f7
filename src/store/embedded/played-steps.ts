import type { Order, PlayedStep } from '../../records/index.js';

/**
 * An order's played steps (`{ step, at }` entries) kept as one array of numbers, step and
 * time in turn: an entry as an object costs an object, its boxed time and an array slot,
 * where its numbers take two slots of one array of doubles. The numbers sit in a private field, out of reach of callers and of `freeze` (freezing an array of
 * doubles makes V8 turn it into a dictionary). Written to the journal and the data file
 * as the entries it stands for (`toJSON`), so the files do not change.
 */
export class PlayedSteps {
  readonly #values: number[];

  private constructor(values: number[]) {
    this.#values = values;
  }

  /** The steps packed, or undefined when an entry is anything but `{ step, at }` with finite numbers (e.g. a cancellation written out). */
  static pack(history: readonly unknown[]): PlayedSteps | undefined {
    const values: number[] = [];
    for (const entry of history) {
      if (typeof entry !== 'object' || entry === null) return undefined;
      let keys = 0;
      for (const key in entry) {
        if (key !== (keys === 0 ? 'step' : 'at') || keys > 1) return undefined;
        keys += 1;
      }
      const { step, at } = entry as PlayedStep;
      // Finite numbers only: JSON writes any other as null, which would not read back as a step.
      if (keys !== 2 || !Number.isFinite(step) || !Number.isFinite(at)) return undefined;
      values.push(step, at);
    }
    return new PlayedSteps(values);
  }

  /** Steps from their numbers (step and time in turn), or undefined unless `values` is an even number of finite numbers. */
  static fromValues(values: readonly unknown[]): PlayedSteps | undefined {
    if (values.length % 2 !== 0) return undefined;
    for (const value of values) if (!Number.isFinite(value)) return undefined;
    return new PlayedSteps(values as number[]);
  }

  /** The numbers, step and time in turn (the data file's form, see `OrderFileFormat`). Not to be changed. */
  values(): readonly number[] {
    return this.#values;
  }

  /** The entries as the Order type has them: new objects, in the order they were packed. */
  entries(): PlayedStep[] {
    const values = this.#values;
    const entries: PlayedStep[] = [];
    for (let i = 0; i < values.length; i += 2) entries.push({ step: values[i]!, at: values[i + 1]! });
    return entries;
  }

  toJSON(): PlayedStep[] {
    return this.entries();
  }
}

/** An order as the embedded store keeps it: its played steps may be packed. */
export type PackedOrder = Omit<Order, 'history'> & { history: Order['history'] | PlayedSteps; version?: number };
