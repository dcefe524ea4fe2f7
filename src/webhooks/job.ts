import type { PoolCaps } from '../jobs/index.js';

/** The job kind of a delivery's next attempt; the key is the delivery id. */
export const WEBHOOK_JOB = 'webhook';

/**
 * Webhook attempts in flight at once, in all and for one client. An attempt waits on a
 * partner's receiver, so the kind runs in the scheduler's pool: a silent receiver holds
 * only its client's share.
 */
export const WEBHOOK_CONCURRENCY: PoolCaps = { total: 64, perClient: 8 };
