/** The webhook figure of bench/run.ts: see bench/webhooks.ts. */
export { measureWebhooks } from './webhooks.js';
