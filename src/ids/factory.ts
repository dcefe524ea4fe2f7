import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';
import { permutedText } from './numbers.js';

interface Counters {
  order: number;
  batch: number;
  awb: Record<string, number>;
}

/**
 * Makes order numbers, batch ids and AWBs: unique across the store and across
 * restarts (counters live in the store), reproducible under a fixed seed, and
 * random-looking (see `permute`). The seed of a data file is kept in it, so numbers
 * stay unique even when the sandbox restarts without --seed.
 */
export class IdFactory {
  readonly seed: string;

  constructor(
    private readonly store: Store,
    seed: string | undefined,
    private readonly exists: (kind: 'order' | 'batch' | 'awb', id: string) => boolean,
  ) {
    const kept = store.get<string>('meta', 'seed');
    this.seed = seed ?? kept ?? randomBytes(8).toString('hex');
    if (kept === undefined) store.put('meta', 'seed', this.seed);
  }

  orderNumber(): string {
    return this.unique('order', () => `5${permutedText(this.next((c) => ++c.order), 11, `${this.seed}:order`)}`);
  }

  batchId(): string {
    return this.unique('batch', () => `7${permutedText(this.next((c) => ++c.batch), 11, `${this.seed}:batch`)}`);
  }

  /** An AWB of the courier: its prefix and `digits` digits. */
  awb(courier: { code: string; awb_prefix: string; awb_digits: number }): string {
    return this.unique('awb', () => {
      const n = this.next((c) => (c.awb[courier.code] = (c.awb[courier.code] ?? 0) + 1));
      return `${courier.awb_prefix}${permutedText(n, courier.awb_digits, `${this.seed}:awb:${courier.code}`)}`;
    });
  }

  private next(step: (counters: Counters) => number): number {
    const counters = this.store.get<Counters>('meta', 'counters') ?? { order: 0, batch: 0, awb: {} };
    const value = step(counters);
    this.store.put('meta', 'counters', counters);
    return value;
  }

  private unique(kind: 'order' | 'batch' | 'awb', make: () => string): string {
    for (;;) {
      const id = make();
      if (!this.exists(kind, id)) return id;
    }
  }
}
