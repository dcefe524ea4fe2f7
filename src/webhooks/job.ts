import type { PoolCaps } from '../jobs/index.js';
import type { Delivery } from '../records/index.js';

/** The job kind of a next attempt to the default endpoint; the key is the delivery id. */
export const WEBHOOK_JOB = 'webhook';

/**
 * The job kind of a next attempt to any other endpoint. A kind of its own, so that a
 * replica of a version without endpoints (a rolling upgrade) never claims one: it would
 * send it to the default endpoint.
 */
export const ENDPOINT_WEBHOOK_JOB = 'endpoint-webhook';

/** The job kind of a recovered delivery's attempt (`POST /__sandbox/webhooks/recover`); the key is the delivery id. */
export const RECOVER_JOB = 'webhook-recover';

/** The kind of the job that makes a delivery's next attempt. */
export const jobKindOf = (delivery: Pick<Delivery, 'endpoint_id'>): typeof WEBHOOK_JOB | typeof ENDPOINT_WEBHOOK_JOB =>
  delivery.endpoint_id === undefined ? WEBHOOK_JOB : ENDPOINT_WEBHOOK_JOB;

/**
 * Webhook attempts in flight at once, in all and for one client. An attempt waits on a
 * partner's receiver, so the kind runs in the scheduler's pool: a silent receiver holds
 * only its client's share.
 */
export const WEBHOOK_CONCURRENCY: PoolCaps = { total: 64, perClient: 8 };
