import type { JobKind } from '../records/index.js';

export interface SchedulerOptions {
  /** How many jobs of local work due at the same moment run at once. */
  concurrency?: number;
  /** How long a claim holds before another worker may take the job over (wall ms). */
  leaseMs?: number;
  /**
   * With a store shared by other processes (PostgreSQL replicas): look for due jobs at
   * least this often (wall ms), so a job whose claim lapsed when its replica died, or one
   * scheduled while a notification was missed, does not wait for the next local wake-up.
   */
  pollMs?: number;
  /**
   * With a store shared by other processes: brings the clocks up to what the store keeps
   * (another replica's advance or speed change) before each wake-up claims due jobs.
   */
  refreshClocks?: () => Promise<void>;
  /**
   * Whether a client is configured on this sandbox ('' is the sandbox's own work). A due job
   * of one that is not (removed from the config, or renamed) is dropped, not run: nothing
   * could run it, and its records go by retention. Default: every client is.
   */
  configured?: (clientId: string) => boolean;
  /**
   * With a store shared by other processes: whether this replica has the client ('' is the
   * sandbox's own work). Replicas may differ while a clients change rolls out; a due job of
   * a client this one lacks is left to the replicas that have it for `leaveToOthersMs` (wall
   * ms) past its due time, then run here as any job (its kind fails it without the client,
   * and it is tried again later, then dropped), so a client that no replica has still ends
   * as the embedded store's does. Default: every client is.
   */
  has?: (clientId: string) => boolean;
  /** How long a job of a client this replica lacks is left to the others (wall ms; see `has`): longer than their `pollMs`. */
  leaveToOthersMs?: number;
  /** Told once per client (per scheduler) after a drain dropped jobs of a client that is not configured, with how many. */
  onUnconfigured?: (clientId: string, dropped: number) => void;
  /** Told of an unexpected failure: of a job's try (`tried`), or of the scheduler's own work. */
  onError?: (error: unknown, kind: string, key: string, tried?: JobTry) => void;
  /** Told once a job is dropped after its last failed try (its kind's own `dropped` runs too). */
  onDropped?: (kind: string, key: string, clientId: string) => void;
  /** Told how late (real ms after its due time) each job fired by the real clock's timer ran (metrics). */
  onLate?: (kind: JobKind, lateMs: number) => void;
  /** The wall clock (ms) the jobs' slices of the event loop are measured with (see LoopSlices). Default `performance.now`; tests give their own. */
  wallClock?: () => number;
}

/** How a job ended: its work done (or dropped), the store away, or cut short by shutdown. */
export type Outcome = 'done' | 'unavailable' | 'interrupted';

/** Which time a job is stamped with: its due time (advance, catch-up at start), or the later of that and its client's now (a job run late under load). */
export type Stamp = 'due' | 'actual';

/** Which try of a job failed: the client's, the `try`th of `tries` before the job is dropped. */
export interface JobTry {
  client: string;
  try: number;
  tries: number;
}
