import type { SharedClockRepository } from '../store/index.js';
import type { Clocks } from './clocks.js';

/**
 * Where several processes share the store (PostgreSQL replicas), the store keeps the
 * clocks: this brings a process's clocks up to what it keeps. A request reads its
 * client's clock before it uses it (one indexed read), a scheduler wake-up reads every
 * clock, so no process acts on a clock another one moved before it answered.
 *
 * @example
 * const sync = new ClockSync(storage.sharedClocks, clocks);
 * await sync.client('client-a'); // clocks.of('client-a') is what the store keeps now
 */
export class ClockSync {
  constructor(
    readonly shared: SharedClockRepository,
    private readonly clocks: Clocks,
  ) {}

  /** The client's clock and the sandbox's ('' : the sandbox's only). */
  async client(clientId: string): Promise<void> {
    this.clocks.adopt(await this.shared.read(clientId === '' ? [] : [clientId]));
  }

  /** Every clock: of these clients and the sandbox's, or all when none is named. */
  async all(clientIds: readonly string[] = []): Promise<void> {
    const named = clientIds.filter((id) => id !== '');
    this.clocks.adopt(await this.shared.read(clientIds.length === 0 ? undefined : named));
  }
}
