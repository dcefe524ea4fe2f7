import { inTurn } from '../clock/turns.js';
import type { Repositories } from '../store/port.js';
import { permutedText } from './numbers.js';

/**
 * Makes order numbers, batch ids and AWBs: unique across the store and across
 * restarts (counters live in the store), reproducible under a fixed seed, and
 * random-looking (see `permute`). The seed of a data file is kept in it (see
 * `sandbox.ts`), so numbers stay unique even when the sandbox restarts without --seed.
 * Each call takes the repositories of the transaction the number is for.
 */
export class IdFactory {
  constructor(readonly seed: string) {}

  orderNumber(tx: Repositories): Promise<string> {
    return this.unique(
      tx,
      async () => this.orderNumberOf(await tx.counters.next('order')),
      async (id) => (await tx.orders.get(id)) !== undefined,
    );
  }

  batchId(tx: Repositories): Promise<string> {
    return this.unique(
      tx,
      async () => this.batchIdOf(await tx.counters.next('batch')),
      (id) => tx.orders.batchExists(id),
    );
  }

  /**
   * An AWB of the courier: its prefix and `digits` digits. Drawn in the job's turn (see
   * Scheduler.runWork): AWB jobs that run side by side draw in the order they were claimed.
   */
  awb(tx: Repositories, courier: { code: string; awb_prefix: string; awb_digits: number }): Promise<string> {
    return inTurn(() =>
      this.unique(
        tx,
        async () => this.awbOf(courier, await tx.counters.next(`awb:${courier.code}`)),
        async (id) => (await tx.orders.byAwb(id)) !== undefined,
      ),
    );
  }

  /** The order number of the counter's value `n` (counter `order`). */
  orderNumberOf(n: number): string {
    return `5${permutedText(n, 11, `${this.seed}:order`)}`;
  }

  /** The batch id of the counter's value `n` (counter `batch`). */
  batchIdOf(n: number): string {
    return `7${permutedText(n, 11, `${this.seed}:batch`)}`;
  }

  /** The courier's AWB of the counter's value `n` (counter `awb:<courier code>`). */
  awbOf(courier: { code: string; awb_prefix: string; awb_digits: number }, n: number): string {
    return `${courier.awb_prefix}${permutedText(n, courier.awb_digits, `${this.seed}:awb:${courier.code}`)}`;
  }

  /**
   * Numbers of one seed never repeat; one made under an earlier seed of the same file may,
   * so it is skipped. A store that refuses a taken number when the record is written
   * (PostgreSQL's keys: the unit is tried again with the counter's next value) spares the
   * look-up, a round trip of every create and every AWB.
   */
  private async unique(tx: Repositories, make: () => Promise<string>, exists: (id: string) => Promise<boolean>): Promise<string> {
    if (tx.orders.refusesTakenIds) return make();
    for (;;) {
      const id = await make();
      if (!(await exists(id))) return id;
    }
  }
}
