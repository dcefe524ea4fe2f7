import { inOrder } from '../jobs/index.js';
import type { Repositories } from '../store/index.js';
import { KeyedPermutation } from './numbers.js';

/**
 * Makes order numbers, batch ids and AWBs: unique across the store and across
 * restarts (counters live in the store), reproducible under a fixed seed, and showing
 * nothing of other clients' volume or ids. Each client's numbers come from a keyed
 * permutation of its own (`KeyedPermutation`) of the store's counters: the key derives
 * from the seed and the client, and the seed of a data file is kept in it (see
 * `sandbox.ts`), so it is a secret of the deployment unless --seed gives it.
 * Each call takes the repositories of the transaction the number is for.
 *
 * Two clients' permutations (or an earlier seed's, or the affine numbering of earlier
 * versions) may give a number taken already, so a taken number is skipped: a store that
 * refuses a taken number when the record is written (PostgreSQL's keys: the unit is tried
 * again with the counter's next value) spares the look-up, a round trip of every create
 * and every AWB. Each kind is drawn by one async function with a loop rather than a helper
 * given two async closures: a create draws an order number per item, and closures and their
 * promises (each carrying the unit of work's async context) would be allocated for each.
 */
export class IdFactory {
  /** Each client's permutations, by client id and kind (`order`, `batch`, `awb:<courier>`). */
  private readonly permutations = new Map<string, Map<string, KeyedPermutation>>();

  constructor(readonly seed: string) {}

  async orderNumber(tx: Repositories, clientId: string): Promise<string> {
    for (;;) {
      const id = this.orderNumberOf(await tx.counters.next('order'), clientId);
      if (tx.orders.refusesTakenIds || (await tx.orders.get(id)) === undefined) return id;
    }
  }

  async batchId(tx: Repositories, clientId: string): Promise<string> {
    for (;;) {
      const id = this.batchIdOf(await tx.counters.next('batch'), clientId);
      if (tx.orders.refusesTakenIds || !(await tx.orders.batchExists(id))) return id;
    }
  }

  /**
   * An AWB of the courier: its prefix and `digits` digits. Drawn in the job's place in its
   * numbering order (see `inOrder`): AWB jobs that run side by side draw in the order they
   * were claimed.
   */
  awb(tx: Repositories, courier: { code: string; awb_prefix: string; awb_digits: number }, clientId: string): Promise<string> {
    return inOrder(async () => {
      for (;;) {
        const id = this.awbOf(courier, await tx.counters.next(`awb:${courier.code}`), clientId);
        if (tx.orders.refusesTakenIds || (await tx.orders.byAwb(id)) === undefined) return id;
      }
    });
  }

  /** The client's order number of the counter's value `n` (counter `order`). */
  orderNumberOf(n: number, clientId: string): string {
    return `5${this.permutation(clientId, 'order').text(n, 11)}`;
  }

  /** The client's batch id of the counter's value `n` (counter `batch`). */
  batchIdOf(n: number, clientId: string): string {
    return `7${this.permutation(clientId, 'batch').text(n, 11)}`;
  }

  /** The client's AWB of the courier for the counter's value `n` (counter `awb:<courier code>`). */
  awbOf(courier: { code: string; awb_prefix: string; awb_digits: number }, n: number, clientId: string): string {
    return `${courier.awb_prefix}${this.permutation(clientId, `awb:${courier.code}`).text(n, courier.awb_digits)}`;
  }

  private permutation(clientId: string, kind: string): KeyedPermutation {
    let ofClient = this.permutations.get(clientId);
    if (ofClient === undefined) {
      ofClient = new Map();
      this.permutations.set(clientId, ofClient);
    }
    let found = ofClient.get(kind);
    if (found === undefined) {
      // Lengths keep the parts apart: no seed and client id can be read as another pair.
      found = new KeyedPermutation(`ids:${this.seed.length}:${this.seed}:${clientId.length}:${clientId}:${kind}`);
      ofClient.set(kind, found);
    }
    return found;
  }
}
