import { ManualClock, type RealClock } from '../../src/clock/clock.js';
import { Scheduler, type SchedulerOptions } from '../../src/jobs/index.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import type { Storage } from '../../src/store/port.js';
import type { JobKind } from '../../src/records/index.js';

/** AWB jobs as tracking registers them: local work, drawing AWBs in the order claimed. */
export const AWB = { kind: 'awb', drawsInOrder: true } as const;

/** The stores a test opened: `closeOpened` (after each test) closes them. */
export const opened: Storage[] = [];

export async function closeOpened(): Promise<void> {
  for (const s of opened) await s.close();
  opened.length = 0;
}

/** A scheduler over an in-memory store, and a way to schedule jobs of client `c`. */
export async function schedulerOn(clock: RealClock | ManualClock, options?: SchedulerOptions) {
  const storage = await EmbeddedStorage.open({ path: ':memory:', requestLogSize: 0 });
  opened.push(storage);
  const scheduler = new Scheduler(storage, clock, options);
  const schedule = (kind: JobKind, key: string, due_at: number) => storage.jobs.schedule({ kind, key, client_id: 'c', due_at });
  return { storage, scheduler, schedule };
}

/** A scheduler on a manual clock whose AWB jobs record the key, the time they were stamped with and client c's time. */
export async function recorder(start = 1_000) {
  const clock = new ManualClock(start);
  const parts = await schedulerOn(clock);
  const runs: Array<{ key: string; at: number; now: number }> = [];
  parts.scheduler.register({ ...AWB, run: async (job, at) => void runs.push({ key: job.key, at, now: parts.scheduler.clocks.of('c') }) });
  return { clock, runs, ...parts };
}
