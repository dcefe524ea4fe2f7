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
    // A store whose insert refuses a taken number (PostgreSQL's primary key) spares the
    // look-up, a round trip of every create; the unit it fails is tried again with the
    // counter's next value.
    if (tx.orders.refusesTakenIds) return tx.counters.next('order').then((n) => this.orderNumberOf(n));
    return this.unique(
      async () => this.orderNumberOf(await tx.counters.next('order')),
      async (id) => (await tx.orders.get(id)) !== undefined,
    );
  }

  batchId(tx: Repositories): Promise<string> {
    if (tx.orders.refusesTakenIds) return tx.counters.next('batch').then((n) => this.batchIdOf(n));
    return this.unique(
      async () => this.batchIdOf(await tx.counters.next('batch')),
      (id) => tx.orders.batchExists(id),
    );
  }

  /** An AWB of the courier: its prefix and `digits` digits. */
  awb(tx: Repositories, courier: { code: string; awb_prefix: string; awb_digits: number }): Promise<string> {
    // PostgreSQL's unique index refuses a taken AWB when the order is written (a Conflict: the unit is tried again).
    if (tx.orders.refusesTakenIds) return tx.counters.next(`awb:${courier.code}`).then((n) => this.awbOf(courier, n));
    return this.unique(
      async () => this.awbOf(courier, await tx.counters.next(`awb:${courier.code}`)),
      async (id) => (await tx.orders.byAwb(id)) !== undefined,
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

  /** Numbers of one seed never repeat; one made under an earlier seed of the same file may, so it is skipped. */
  private async unique(make: () => Promise<string>, exists: (id: string) => Promise<boolean>): Promise<string> {
    for (;;) {
      const id = await make();
      if (!(await exists(id))) return id;
    }
  }
}
