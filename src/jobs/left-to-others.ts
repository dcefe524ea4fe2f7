import type { Clocks } from '../clock/index.js';
import type { ClaimedJob, ClockLead } from '../records/index.js';
import type { SchedulerOptions } from './options.js';
import type { JobRunner } from './runner.js';

const NONE: ReadonlySet<string> = new Set();

/** The leads of one claim, and the clients among them whose jobs were due to this replica later. */
export interface LeadsLeaving {
  ahead: ClockLead;
  leaving: ReadonlySet<string>;
}

/**
 * On a store that other replicas share, the jobs of clients this replica lacks (a clients
 * change rolled out half way): each is left to the replicas that have its client for
 * `leaveToOthersMs` past its due time, then run here as any job. A replica that failed
 * such a job at once would claim its retries first too (it wakes at their due time; the
 * others look every few seconds) and drop it at its fifth try, while a replica with the
 * client ran. The wait is on the sandbox's clock (times its speed, in whole ms) and a lead
 * in the claims, so a claim and `nextDue` look at each such client's earliest job, never
 * at all of them.
 */
export class LeftToOthers {
  /** The clients whose jobs this replica met but lacks: their jobs are due to it later. */
  private readonly lacking = new Set<string>();

  constructor(
    private readonly clocks: Clocks,
    private readonly runner: JobRunner,
    private readonly options: Pick<SchedulerOptions, 'has' | 'leaveToOthersMs'>,
  ) {}

  /** Every client's lead for a claim on the sandbox's clock, less the wait for the clients this replica lacks. */
  leads(): LeadsLeaving {
    const leads = this.clocks.leads();
    // A copy, even of none: `mine` adds to the live set while this claim's jobs were claimed without the wait.
    if (this.lacking.size === 0) return { ahead: leads, leaving: NONE };
    const wait = this.wait();
    const leaving = new Set(this.lacking);
    return { ahead: new Map([...leads, ...[...leaving].map((client): [string, number] => [client, (leads.get(client) ?? 0) - wait])]), leaving };
  }

  /** A client's lead for a claim on the sandbox's clock (see `leads`): a wake-up for its job is armed by it. */
  lead(client: string): number {
    const ahead = this.clocks.ahead(client);
    return this.lacking.has(client) ? ahead - this.wait() : ahead;
  }

  /**
   * The claimed jobs (claimed up to `until` on the sandbox's clock, with `claimedWith`'s
   * leads) this replica runs. A job of a client it lacks was claimed the wait late when
   * the claim already left that client's jobs: it is run. Met for the first time, it is
   * given back when it fell due less than the wait ago, and from then on that client's
   * jobs are due to this replica the wait late (so a job is given back once by each drain
   * that met it before, at most: the catch-up at start and a wake-up may both).
   */
  async mine(claimed: ClaimedJob[], until: number, claimedWith: LeadsLeaving): Promise<ClaimedJob[]> {
    const { has } = this.options;
    if (has === undefined || claimed.every((job) => has(job.client_id))) return claimed;
    const kept: ClaimedJob[] = [];
    for (const job of claimed) {
      const client = job.client_id;
      if (has(client) || claimedWith.leaving.has(client) || job.due_at + this.wait() <= until + Math.round(claimedWith.ahead.get(client) ?? 0)) {
        kept.push(job);
        continue;
      }
      this.lacking.add(client);
      await this.runner.release(job);
    }
    return kept;
  }

  /** The wait on the sandbox's clock. A manual clock moves only by advances, which run their client's jobs themselves: none. */
  private wait(): number {
    return this.clocks.mode === 'real' ? Math.ceil((this.options.leaveToOthersMs ?? 0) * this.clocks.speed) : 0;
  }
}
