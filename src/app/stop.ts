import type { Logger } from 'pino';
import { within } from '../shared/index.js';
import type { SandboxModule } from '../http/index.js';
import type { Services } from './services.js';

/**
 * How long past the webhook timeout a stop waits for the jobs in flight before it aborts
 * what is left: an attempt has its timeout, and this margin is for recording its outcome.
 */
export const STOP_RECORD_MARGIN_MS = 2_000;

/**
 * Stops background work in the order that loses nothing and repeats nothing: no new
 * claims; then the jobs in flight finish and are recorded as at any other time (a
 * webhook attempt waits for its receiver, up to the webhook timeout, and its outcome and
 * next attempt are written), while jobs claimed but not started are given back; then
 * each module's close (ending streams, closing the webhook client; hung requests and
 * dribbled answers were let go as the stop began, see SandboxModule.stopping, or now
 * for an app served without createSandbox).
 * Only if the jobs are still running STOP_RECORD_MARGIN_MS past the webhook timeout (a
 * store that does not answer) does a module's close abort the attempts left: those are
 * not recorded and stay due (at-least-once, as after a crash). The store stays open.
 */
export async function stopServices(services: Services, modules: SandboxModule[]): Promise<void> {
  const { scheduler, options, logger } = services;
  const jobsDone = scheduler.stop();
  const waitedMs = options.webhookTimeout + STOP_RECORD_MARGIN_MS;
  const drained = (await within(jobsDone.then(() => true), waitedMs)) === true;
  if (!drained) {
    logger.warn(
      { waited_ms: waitedMs },
      'stopping: jobs still running past the webhook timeout are cut short: an attempt not answered yet is abandoned and stays due (sent again later); one answered is recorded if the store takes it, else it stays due too',
    );
  }
  for (const m of modules) await m.close?.();
  await jobsDone;
  await services.clockService.saveAll().catch((err: unknown) => services.logger.error({ err }, 'client clocks not saved'));
}

/**
 * What a start that failed throws: its error. When that is the abort of the start's signal
 * (a SIGTERM during the start), the start was stopped rather than failed: one line says so,
 * true of every store (a data file's lock is given back; a database has no lock to give back).
 */
export function endedStart(error: unknown, signal: AbortSignal | undefined, logger: Logger): unknown {
  if (signal?.aborted && error === signal.reason) {
    logger.info({ reason: String(signal.reason) }, 'start stopped before the sandbox listened: what it had opened is closed, its store included');
  }
  return error;
}
