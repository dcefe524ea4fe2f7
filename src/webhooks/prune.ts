import { letRequestsIn } from '../shared/index.js';
import type { Storage } from '../store/index.js';
import { jobKindOf } from './job.js';
import { RECOVER_JOB } from './recover.js';

/** How many deliveries one unit of work removes. */
const REMOVE_PAGE = 500;

/**
 * Removes the client's deliveries and their jobs (reset), a page per unit of work, the
 * event loop let go between pages; `removedSome` is told after each. Returns how many.
 */
export async function removeDeliveries(storage: Storage, clientId: string, removedSome: () => void): Promise<number> {
  let removed = 0;
  for (;;) {
    const page = await storage.deliveries.list(clientId, { limit: REMOVE_PAGE, total: false });
    if (page.items.length === 0) return removed;
    await storage.transaction(async (tx) => {
      for (const d of page.items) {
        await tx.jobs.cancel(jobKindOf(d), d.id);
        await tx.jobs.cancel(RECOVER_JOB, d.id);
        await tx.deliveries.remove(d);
      }
    });
    removedSome();
    removed += page.items.length;
    await letRequestsIn();
  }
}

/** Removes settled deliveries (delivered or failed) created before `olderThan` (retention), a page per unit of work, the event loop let go between pages. */
export async function pruneSettled(storage: Storage, olderThan: number, clientId?: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const old = await storage.deliveries.settledBefore(olderThan, REMOVE_PAGE, clientId);
    if (old.length === 0) return removed;
    await storage.transaction(async (tx) => {
      for (const d of old) await tx.deliveries.remove(d);
    });
    removed += old.length;
    await letRequestsIn();
  }
}

/** Removes the client's deliveries of these orders and their jobs (the orders are gone: a provider state's teardown), an order's page per unit of work. Returns how many. */
export async function removeOrderDeliveries(storage: Storage, clientId: string, orderNos: readonly string[]): Promise<number> {
  let removed = 0;
  for (const orderNo of orderNos) {
    for (;;) {
      const page = await storage.deliveries.list(clientId, { limit: REMOVE_PAGE, order_no: orderNo, total: false });
      if (page.items.length === 0) break;
      await storage.transaction(async (tx) => {
        for (const d of page.items) {
          await tx.jobs.cancel(jobKindOf(d), d.id);
          await tx.jobs.cancel(RECOVER_JOB, d.id);
          await tx.deliveries.remove(d);
        }
      });
      removed += page.items.length;
      await letRequestsIn();
    }
  }
  return removed;
}
