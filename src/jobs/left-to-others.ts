import type { Clocks } from '../clock/index.js';
import type { ClaimedJob, ClockLead } from '../records/index.js';
import type { SchedulerOptions } from './options.js';
import type { JobRunner } from './runner.js';

/**
 * On a store that other replicas share, the jobs of clients this replica lacks (a clients
 * change rolled out half way): each is left to the replicas that have its client for
 * `leaveToOthersMs` past its due time, then run here as any job. A replica that failed
 * such a job at once would claim its retries first too (it wakes at their due time; the
 * others look every few seconds) and drop it at its fifth try, while a replica with the
 * client ran. The wait is on the sandbox's clock (times its speed) and a lead in the
 * claims, so a claim and `nextDue` look at each such client's earliest job, never at all
 * of them.
 */
export class LeftToOthers {
  /** The clients whose jobs this replica met but lacks: their jobs are due to it later. */
  private readonly lacking = new Set<string>();

  constructor(
    private readonly clocks: Clocks,
    private readonly runner: JobRunner,
    private readonly options: Pick<SchedulerOptions, 'has' | 'leaveToOthersMs'>,
  ) {}

  /** Every client's lead for a claim on the sandbox's clock, less the wait of the clients this replica lacks. */
  leads(): ClockLead {
    const leads = this.clocks.leads();
    if (this.lacking.size === 0) return leads;
    const wait = this.wait();
    return new Map([...leads, ...[...this.lacking].map((client): [string, number] => [client, (leads.get(client) ?? 0) - wait])]);
  }

  /**
   * The claimed jobs (claimed up to `until` on the sandbox's clock) this replica runs: a job
   * of a client it lacks that fell due less than the wait ago is given back, and from then
   * on that client's jobs are due to this replica the wait late.
   */
  async mine(claimed: ClaimedJob[], until: number): Promise<ClaimedJob[]> {
    const { has } = this.options;
    if (has === undefined || claimed.every((job) => has(job.client_id))) return claimed;
    const kept: ClaimedJob[] = [];
    for (const job of claimed) {
      if (has(job.client_id) || job.due_at + this.wait() <= until + this.clocks.ahead(job.client_id)) {
        kept.push(job);
        continue;
      }
      this.lacking.add(job.client_id);
      await this.runner.release(job);
    }
    return kept;
  }

  /** The wait on the sandbox's clock. A manual clock moves only by advances, each through a replica that has the client: none. */
  private wait(): number {
    return this.clocks.mode === 'real' ? (this.options.leaveToOthersMs ?? 0) * this.clocks.speed : 0;
  }
}
