import { AWB_JOB, STEP_JOB } from '../tracking/index.js';

/** What a job given up on leaves undone, and how to do it by hand. */
export function droppedJob(kind: string, key: string): string {
  const gaveUp = `gave up on the ${kind} job of ${key} after its fifth failed try (the errors before this line say why)`;
  if (kind === AWB_JOB) return `${gaveUp}: order ${key} waits for its AWB until POST /__sandbox/orders/${key}/awb generates it`;
  if (kind === STEP_JOB) return `${gaveUp}: order ${key} waits at its step until POST /__sandbox/orders/${key}/advance plays it`;
  return gaveUp;
}

/** What the jobs of a client no longer configured became (once per client and start). */
export const unconfiguredJobs = (client: string, dropped: number): string =>
  `client "${client}" is not configured on this sandbox: ${dropped} of its scheduled jobs (AWBs, tracking steps, webhook attempts) fell due and were dropped, as will any more; its records go by --retention`;
