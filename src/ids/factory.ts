import { inOrder } from '../jobs/index.js';
import type { Repositories } from '../store/index.js';
import { permutedText } from './numbers.js';

/**
 * Makes order numbers, batch ids and AWBs: unique across the store and across
 * restarts (counters live in the store), reproducible under a fixed seed, and
 * random-looking (see `permute`). The seed of a data file is kept in it (see
 * `sandbox.ts`), so numbers stay unique even when the sandbox restarts without --seed.
 * Each call takes the repositories of the transaction the number is for.
 *
 * Numbers of one seed never repeat; one made under an earlier seed of the same file may,
 * so it is skipped. A store that refuses a taken number when the record is written
 * (PostgreSQL's keys: the unit is tried again with the counter's next value) spares the
 * look-up, a round trip of every create and every AWB. Each kind is drawn by one async
 * function with a loop rather than a helper given two async closures: a create draws an
 * order number per item, and closures, their promises (each carrying the unit of work's
 * async context) and seed keys built per call would be allocated for each.
 */
export class IdFactory {
  private readonly orderSeed: string;
  private readonly batchSeed: string;
  /** The seed of each courier's AWBs, by courier code (a few couriers). */
  private readonly awbSeeds = new Map<string, string>();

  constructor(readonly seed: string) {
    this.orderSeed = `${seed}:order`;
    this.batchSeed = `${seed}:batch`;
  }

  async orderNumber(tx: Repositories): Promise<string> {
    for (;;) {
      const id = this.orderNumberOf(await tx.counters.next('order'));
      if (tx.orders.refusesTakenIds || (await tx.orders.get(id)) === undefined) return id;
    }
  }

  async batchId(tx: Repositories): Promise<string> {
    for (;;) {
      const id = this.batchIdOf(await tx.counters.next('batch'));
      if (tx.orders.refusesTakenIds || !(await tx.orders.batchExists(id))) return id;
    }
  }

  /**
   * An AWB of the courier: its prefix and `digits` digits. Drawn in the job's place in its
   * numbering order (see `inOrder`): AWB jobs that run side by side draw in the order they
   * were claimed.
   */
  awb(tx: Repositories, courier: { code: string; awb_prefix: string; awb_digits: number }): Promise<string> {
    return inOrder(async () => {
      for (;;) {
        const id = this.awbOf(courier, await tx.counters.next(`awb:${courier.code}`));
        if (tx.orders.refusesTakenIds || (await tx.orders.byAwb(id)) === undefined) return id;
      }
    });
  }

  /** The order number of the counter's value `n` (counter `order`). */
  orderNumberOf(n: number): string {
    return `5${permutedText(n, 11, this.orderSeed)}`;
  }

  /** The batch id of the counter's value `n` (counter `batch`). */
  batchIdOf(n: number): string {
    return `7${permutedText(n, 11, this.batchSeed)}`;
  }

  /** The courier's AWB of the counter's value `n` (counter `awb:<courier code>`). */
  awbOf(courier: { code: string; awb_prefix: string; awb_digits: number }, n: number): string {
    let seed = this.awbSeeds.get(courier.code);
    if (seed === undefined) {
      seed = `${this.seed}:awb:${courier.code}`;
      this.awbSeeds.set(courier.code, seed);
    }
    return `${courier.awb_prefix}${permutedText(n, courier.awb_digits, seed)}`;
  }
}
