import type { JobKind } from './job.js';

/**
 * How far each client's clock runs ahead of the clock a time is given on (ms; a client
 * not named: 0). With it, a job of client `c` is due by `until` when
 * `due_at <= until + ahead.get(c)`, and due times compare as `due_at - ahead.get(c)`.
 */
export type ClockLead = ReadonlyMap<string, number>;

/** Which due jobs a claim takes, for which worker, and for how long it holds them. */
export interface ClaimOptions {
  /** Jobs due at or before this time (sandbox epoch ms; on each job's own client clock, shifted by `ahead`). */
  until: number;
  /** Only this client's jobs (an advance of its clock). */
  clientId?: string;
  /** Each client's clock lead over `until`'s clock; jobs are claimed most overdue first. */
  ahead?: ClockLead;
  limit: number;
  /** Who claims: a worker id, unique per process. */
  owner: string;
  /** How long the claim holds (wall ms) before another worker may take the job over. */
  leaseMs: number;
  /** Only jobs of these kinds (default: every kind). */
  kinds?: readonly JobKind[];
  /**
   * At most this many jobs of any one client in this claim, taken in rounds: every
   * client's earliest due job (most overdue client first), then every client's second,
   * and so on, so a client's backlog never keeps another client's due job out of a claim
   * while fewer than `limit` clients have jobs due. Default: no share, earliest due first.
   */
  perClient?: number;
  /** None of these clients' jobs (their share of the work is in use). */
  skipClients?: ReadonlySet<string>;
}

/** Which jobs `nextDue` looks at. */
export interface DueFilter {
  clientId?: string;
  /** Answer on the clock the leads are measured from: the earliest `due_at - ahead.get(client)`. */
  ahead?: ClockLead;
  kinds?: readonly JobKind[];
  skipClients?: ReadonlySet<string>;
}
