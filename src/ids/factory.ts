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
      async () => `5${permutedText(await tx.counters.next('order'), 11, `${this.seed}:order`)}`,
      async (id) => (await tx.orders.get(id)) !== undefined,
    );
  }

  batchId(tx: Repositories): Promise<string> {
    return this.unique(
      async () => `7${permutedText(await tx.counters.next('batch'), 11, `${this.seed}:batch`)}`,
      (id) => tx.orders.batchExists(id),
    );
  }

  /** An AWB of the courier: its prefix and `digits` digits. */
  awb(tx: Repositories, courier: { code: string; awb_prefix: string; awb_digits: number }): Promise<string> {
    return this.unique(
      async () => `${courier.awb_prefix}${permutedText(await tx.counters.next(`awb:${courier.code}`), courier.awb_digits, `${this.seed}:awb:${courier.code}`)}`,
      async (id) => (await tx.orders.byAwb(id)) !== undefined,
    );
  }

  /** Numbers of one seed never repeat; one made under an earlier seed of the same file may, so it is skipped. */
  private async unique(make: () => Promise<string>, exists: (id: string) => Promise<boolean>): Promise<string> {
    for (;;) {
      const id = await make();
      if (!(await exists(id))) return id;
    }
  }
}
