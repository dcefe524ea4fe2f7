import { letRequestsIn } from '../shared/index.js';
import type { Delivery } from '../records/index.js';
import type { Repositories, Storage } from '../store/index.js';
import { jobKindOf, RECOVER_JOB } from './job.js';

/** How many deliveries one unit of work removes. */
const REMOVE_PAGE = 500;

/**
 * Removes deliveries as they are now (an attempt, or another removal, may have changed
 * them since they were listed) with their jobs; answers how many were still there.
 */
export async function removeWithJobs(tx: Repositories, listed: ReadonlyArray<Pick<Delivery, 'id'>>): Promise<number> {
  const found = await tx.deliveries.getMany(listed.map((d) => d.id));
  for (const d of found) {
    await tx.jobs.cancel(jobKindOf(d), d.id);
    await tx.jobs.cancel(RECOVER_JOB, d.id);
    await tx.deliveries.remove(d);
  }
  return found.length;
}

/**
 * Removes the client's deliveries and their jobs (reset), a page per unit of work, the
 * event loop let go between pages; `removedSome` is told after each. Returns how many.
 */
export async function removeDeliveries(storage: Storage, clientId: string, removedSome: () => void): Promise<number> {
  let removed = 0;
  for (;;) {
    const page = await storage.deliveries.list(clientId, { limit: REMOVE_PAGE, total: false });
    if (page.items.length === 0) return removed;
    removed += await storage.transaction((tx) => removeWithJobs(tx, page.items));
    removedSome();
    await letRequestsIn();
  }
}

/** Removes settled deliveries (delivered or failed) created before `olderThan` (retention), a page per unit of work, the event loop let go between pages. */
export async function pruneSettled(storage: Storage, olderThan: number, clientId?: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const old = await storage.deliveries.settledBefore(olderThan, REMOVE_PAGE, clientId);
    if (old.length === 0) return removed;
    removed += await storage.transaction(async (tx) => {
      let settled = 0;
      // As they are now (an attempt may have been recorded since), and still settled.
      for (const d of await tx.deliveries.getMany(old.map((found) => found.id))) {
        if (d.status !== 'delivered' && d.status !== 'failed') continue;
        await tx.deliveries.remove(d);
        settled += 1;
      }
      return settled;
    });
    await letRequestsIn();
  }
}

/**
 * Removes the client's deliveries of these orders and their jobs (the orders are gone: a
 * provider state's teardown, retention by count), a page per unit of work; `removedSome` is
 * told after each. Returns how many.
 */
export async function removeOrderDeliveries(storage: Storage, clientId: string, orderNos: readonly string[], removedSome?: () => void): Promise<number> {
  let removed = 0;
  for (let from = 0; from < orderNos.length; from += REMOVE_PAGE) {
    const orders = orderNos.slice(from, from + REMOVE_PAGE);
    for (;;) {
      const page = await storage.deliveries.ofOrders(clientId, orders, REMOVE_PAGE);
      if (page.length === 0) break;
      removed += await storage.transaction((tx) => removeWithJobs(tx, page));
      removedSome?.();
      await letRequestsIn();
    }
  }
  return removed;
}
