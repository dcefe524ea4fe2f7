import type { Logger } from 'pino';
import type { Storage } from '../store/index.js';

/**
 * On a shared database every replica needs the same `--clock`: a client's time on a manual
 * clock is where it was last set, on a real one wall time (times `--speed`) plus its
 * offset, so replicas of both kinds show one client times minutes apart, whichever answers.
 * At start, a replica compares its `--clock` with the one the replica that started last
 * kept, warns when they differ, and keeps its own, as compareClients does with the
 * clients. (`--speed` needs no such check: the real clock's speed is kept in the database,
 * and a replica started with another one changes it for all.)
 */
export async function compareClockMode(storage: Storage, mode: 'real' | 'manual', logger: Logger): Promise<void> {
  const kept = await storage.meta.get('clock_mode');
  if (kept !== undefined && kept.mode !== mode) {
    logger.warn(
      { clock: mode, other_clock: kept.mode, other_started_at: kept.at },
      `the clock of this replica (--clock ${mode}) differs from that of the replica that started last, at ${kept.at} (--clock ${kept.mode}): every replica of a shared database needs the same --clock, or one client is shown different times by different replicas (expected while a change rolls out: start every replica with it)`,
    );
  }
  await storage.meta.set('clock_mode', { mode, at: new Date().toISOString() });
}
