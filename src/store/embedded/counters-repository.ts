import type { CounterRepository } from '../port.js';
import { COUNTERS } from './collections.js';
import type { Access } from './unit-of-work.js';

/** Named counters, each a number in the counters collection. */
export class EmbeddedCounters implements CounterRepository {
  constructor(private readonly access: Access) {}

  async next(name: string): Promise<number> {
    const value = (this.access.get<number>(COUNTERS, name) ?? 0) + 1;
    this.access.put(COUNTERS, name, value);
    return value;
  }

  /** The counter's next value: one process, one order. */
  rank(name: string): Promise<number> {
    return this.next(name);
  }
}
