import { Unavailable } from '../shared/index.js';
import type { Storage } from '../store/index.js';
import type { JobKinds } from './kinds.js';
import { holdingPlace, NumberingOrder } from './numbering-order.js';
import type { Outcome, Stamp } from './options.js';
import type { JobRunner } from './runner.js';
import type { ClaimedJob } from '../records/index.js';

/**
 * How many of a client's jobs run at once when they run side by side: a store's
 * background connections are few (6 on PostgreSQL), and one partner's backlog must leave
 * some to the others.
 */
const ROW_PARALLEL = 3;

/**
 * How a claim of local work runs: the clients side by side, and each client's jobs in a
 * row of their own. Stamped with their due time (an advance, the catch-up at start), a
 * client's jobs run one after another in the order claimed (earliest due, then first
 * scheduled), so events come in the same order on every store. Stamped with the time they
 * run (the real clock's wake-ups) on a store that other processes share (PostgreSQL), they
 * run side by side: there each job costs a few round trips, and one after another a
 * partner's backlog would drain no faster than those round trips allow, whereas the
 * embedded store runs units one at a time anyway. Jobs of one order still run in order,
 * and numbers are still drawn in the order claimed (`inOrder`), so a seeded sandbox gives
 * each order the same AWB.
 */
export class Rows {
  constructor(
    private readonly storage: Storage,
    private readonly kinds: JobKinds,
    private readonly runner: JobRunner,
    /** Whether other processes share the store. */
    private readonly shared: boolean,
  ) {}

  /** Runs claimed work, the clients side by side; resolves with every job's outcome. */
  async runWork(work: readonly ClaimedJob[], stamp: Stamp): Promise<Outcome[]> {
    const byClient = new Map<string, ClaimedJob[]>();
    for (const job of work) {
      const row = byClient.get(job.client_id);
      if (row) row.push(job);
      else byClient.set(job.client_id, [job]);
    }
    const rows = [...byClient.values()].map((jobs) => (this.sideBySideFor(stamp) ? this.sideBySide(jobs, stamp) : this.inRow(jobs, stamp)));
    return (await Promise.all(rows)).flat();
  }

  /** Whether a client's jobs stamped so run side by side. */
  sideBySideFor(stamp: Stamp): boolean {
    return stamp === 'actual' && this.shared;
  }

  /**
   * A client's jobs one after another; after one cut short (shutdown, store away) the rest
   * are given back untried. On a store that offers it, each run of jobs whose kinds work
   * in one transaction is one unit of work with each job a part of it
   * (`Storage.inOneUnit`): one commit for the run, not one per job, and nothing of a job
   * that failed (see `asOneUnit` for a commit that fails).
   */
  private async inRow(jobs: readonly ClaimedJob[], stamp: Stamp): Promise<Outcome[]> {
    if (this.storage.inOneUnit === undefined) return this.eachInRow(jobs, stamp);
    const ended: Outcome[] = [];
    for (let start = 0; start < jobs.length; ) {
      let end = start + 1;
      if (this.oneTransaction(jobs[start]!)) while (end < jobs.length && this.oneTransaction(jobs[end]!)) end++;
      const last = ended.at(-1);
      const run = jobs.slice(start, end);
      if (last === 'interrupted' || last === 'unavailable') ended.push(...(await this.eachInRow(run, stamp, last)));
      else ended.push(...(run.length === 1 ? await this.eachInRow(run, stamp) : await this.asOneUnit(run, stamp)));
      start = end;
    }
    return ended;
  }

  private oneTransaction(job: ClaimedJob): boolean {
    return this.kinds.byKind.get(job.kind)?.oneTransaction === true;
  }

  /**
   * The jobs as the parts of one unit of work. A commit that fails for want of the store
   * gives them all back (tried again once it can write); one that fails otherwise (a
   * fault of the sandbox's own) is reported, and the jobs run again one by one, each in a
   * unit of its own, so each failure is reported and retried as a job's is.
   */
  private async asOneUnit(jobs: readonly ClaimedJob[], stamp: Stamp): Promise<Outcome[]> {
    try {
      return await this.storage.inOneUnit!(() => this.eachInRow(jobs, stamp));
    } catch (error) {
      if (!(error instanceof Unavailable)) {
        this.runner.report(error, jobs[0]!);
        return this.eachInRow(jobs, stamp);
      }
      for (const job of jobs) await this.runner.release(job);
      return jobs.map(() => 'unavailable');
    }
  }

  /** The jobs one after another; `cutShort` (or the first job cut short) gives the rest back untried. */
  private async eachInRow(jobs: readonly ClaimedJob[], stamp: Stamp, cutShort?: Outcome): Promise<Outcome[]> {
    const ended: Outcome[] = [];
    for (const job of jobs) {
      const last = ended.at(-1) ?? cutShort;
      if (last === 'interrupted' || last === 'unavailable') {
        await this.runner.release(job);
        continue;
      }
      ended.push(await this.runner.run(job, stamp));
    }
    return ended;
  }

  /**
   * A client's jobs side by side, at most ROW_PARALLEL at once, started in the order
   * claimed: each after the one before it of the same order, and each job of a kind that
   * draws in order taking its place after the one claimed before it. After one cut short
   * (shutdown, store away) the jobs not started yet are given back untried.
   */
  private async sideBySide(jobs: readonly ClaimedJob[], stamp: Stamp): Promise<Outcome[]> {
    let previousPlace = Promise.resolve();
    const lastOfOrder = new Map<string, Promise<Outcome>>();
    const running = new Set<Promise<Outcome>>();
    const outcomes: Array<Promise<Outcome>> = [];
    let stopped = false;
    for (const job of jobs) {
      while (running.size >= ROW_PARALLEL) await Promise.race(running);
      if (stopped) {
        await this.runner.release(job);
        continue;
      }
      const place = this.kinds.byKind.get(job.kind)?.drawsInOrder ? new NumberingOrder(previousPlace) : undefined;
      if (place) previousPlace = place.done;
      const run = (): Promise<Outcome> => (place ? holdingPlace(place, () => this.runner.run(job, stamp)) : this.runner.run(job, stamp));
      const outcome = (lastOfOrder.get(job.key) ?? Promise.resolve()).then(run).then((ended) => {
        if (ended === 'interrupted' || ended === 'unavailable') stopped = true;
        return ended;
      });
      lastOfOrder.set(job.key, outcome);
      outcomes.push(outcome);
      running.add(outcome);
      void outcome.finally(() => running.delete(outcome));
    }
    return Promise.all(outcomes);
  }
}
