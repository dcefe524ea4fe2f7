import type { Storage } from '../store/index.js';
import { WEBHOOK_JOB } from './job.js';

/**
 * Gives each pending delivery (pings aside) of these clients the job of its next attempt,
 * due at its `next_attempt_at`: for a data file of schema 1, which kept due times only in
 * its records.
 */
export async function scheduleStoredAttempts(storage: Storage, clientIds: readonly string[]): Promise<void> {
  for (const clientId of clientIds) {
    let cursor: string | undefined;
    do {
      const page = await storage.deliveries.list(clientId, { status: 'pending', limit: 500, cursor });
      await storage.transaction(async (tx) => {
        for (const d of page.items) {
          if (d.event !== 'ping') await tx.jobs.schedule({ kind: WEBHOOK_JOB, key: d.id, client_id: d.client_id, due_at: d.next_attempt_at ?? 0 });
        }
      });
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }
}
