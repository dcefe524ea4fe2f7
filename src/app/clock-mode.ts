import type { Logger } from 'pino';
import type { Storage } from '../store/index.js';

/**
 * On a shared database every replica needs the same `--clock`: a client's time on a manual
 * clock is where it was last set, on a real one wall time (times `--speed`) plus its
 * offset, so replicas of both kinds show one client different times, whichever answers, and
 * an advance through a replica of the other kind moves a manual clock to that replica's
 * time (months on, for a clock left in the past), for good: a clock never moves back.
 * At start, a replica compares its `--clock` with the one the replica that started last
 * kept, warns when they differ, and keeps its own, as compareClients does with the
 * clients. A real clock's speed is kept in the database: a replica started with a
 * `--speed` other than the last start's changes it for every replica (loadClocks), which
 * it says here, as a mis-set replica would otherwise move every client's clock on
 * unannounced (a clock never moves back).
 */
export async function compareClockMode(storage: Storage, mode: 'real' | 'manual', speed: number, logger: Logger): Promise<void> {
  const started = mode === 'real' ? (await storage.sharedClocks?.read([]))?.real?.started_speed : undefined;
  if (started !== undefined && started !== speed) {
    logger.warn(
      { speed, other_speed: started },
      `the --speed of this replica (${speed}) differs from that of the start before it (${started}): the real clock runs at ${speed} on every replica of this database from now on (PUT /__sandbox/clock/speed sets it back; a client's clock never moves back)`,
    );
  }
  const kept = await storage.meta.get('clock_mode');
  if (kept !== undefined && kept.mode !== mode) {
    logger.warn(
      { clock: mode, other_clock: kept.mode, other_started_at: kept.at },
      `the clock of this replica (--clock ${mode}) differs from that of the replica that started last, at ${kept.at} (--clock ${kept.mode}): every replica of a shared database needs the same --clock, or one client is shown different times by different replicas (expected while a change rolls out: start every replica with it)`,
    );
  }
  await storage.meta.set('clock_mode', { mode, at: new Date().toISOString() });
}
