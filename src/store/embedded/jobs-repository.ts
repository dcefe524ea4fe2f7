import type { JobRepository } from '../port.js';
import { shareOf } from '../port.js';
import { copyWith } from './file/index.js';
import type { Indexes, JobQueue } from './indexes.js';
import { JOBS, jobId } from './collections.js';
import { stored } from './stored.js';
import type { Access } from './unit-of-work.js';
import type { ClaimedJob, ClaimOptions, DueFilter, Job, JobKind, Stored } from '../../records/index.js';

/** A client's clock lead (0 when not named). */
const leadOf =
  (ahead: ClaimOptions['ahead']) =>
  (clientId: string): number =>
    ahead?.get(clientId) ?? 0;

/** Jobs, claimed from per-client queues ordered by due time (see Indexes.jobs). */
export class EmbeddedJobs implements JobRepository {
  constructor(
    private readonly access: Access,
    private readonly indexes: Indexes,
  ) {}

  async schedule(job: Job): Promise<void> {
    const id = jobId(job.kind, job.key);
    const current = stored(this.access.get<Job>(JOBS, id));
    // Above every committed job's version (see JobIndex.highestVersion), and above this unit's own write of it.
    const version = Math.max(current?.version ?? 0, this.indexes.jobs.highestVersion) + 1;
    this.access.put(JOBS, id, { kind: job.kind, key: job.key, client_id: job.client_id, due_at: job.due_at, version });
  }

  async cancel(kind: JobKind, key: string): Promise<void> {
    const id = jobId(kind, key);
    if (this.access.get(JOBS, id) !== undefined) this.access.remove(JOBS, id);
  }

  async get(kind: JobKind, key: string): Promise<Stored<Job> | undefined> {
    return stored(this.access.get<Job>(JOBS, jobId(kind, key)));
  }

  async claim({ until, limit, owner, leaseMs, kinds, perClient: asked, skipClients, clientId, ahead }: ClaimOptions): Promise<ClaimedJob[]> {
    const perClient = shareOf(asked);
    const claimed: ClaimedJob[] = [];
    const { claims } = this.indexes.jobs;
    const leaseUntil = Date.now() + leaseMs;
    const taken = new Map<string, number>();
    const lead = leadOf(ahead);
    const open = (queue: JobQueue): boolean =>
      (clientId === undefined || queue.client === clientId) &&
      (kinds === undefined || kinds.includes(queue.kind)) &&
      !skipClients?.has(queue.client);
    // In rounds: each client's earliest due job before any client's second (and so on, up
    // to perClient; in round r, the clients that took r jobs), so however many clients
    // have backlogs, a client whose job just fell due is in the next claim (as long as
    // fewer than `limit` clients have due jobs).
    // Without a share, earliest due first whoever's it is.
    const inRounds = Number.isFinite(perClient);
    let round = 0;
    let tookThisRound = false;
    while (claimed.length < limit && round < perClient) {
      const queue = this.earliest((q) => open(q) && (!inRounds || (taken.get(q.client) ?? 0) === round), lead);
      if (!queue || queue.heap.topAt() - lead(queue.client) > until) {
        if (!tookThisRound) break;
        round += 1;
        tookThisRound = false;
        continue;
      }
      tookThisRound = true;
      const id = queue.heap.topId()!;
      queue.heap.pop();
      const job = stored(this.access.get<Job>(JOBS, id))!; // earliest() only answers live entries
      claims.set(id, { owner, lease_until: leaseUntil, version: job.version });
      claimed.push(copyWith(job, { claimed_by: owner, lease_until: leaseUntil }));
      taken.set(queue.client, (taken.get(queue.client) ?? 0) + 1);
    }
    return claimed;
  }

  async complete(job: ClaimedJob): Promise<void> {
    const id = jobId(job.kind, job.key);
    const current = stored(this.access.get<Job>(JOBS, id));
    // The claim goes once a change of the job commits (Indexes.apply), never before: a
    // commit that fails must leave it, so that releasing the job puts it back in its
    // queue. A job rescheduled in this unit (a step job's next step) is kept as
    // rescheduled; one rescheduled or cancelled by another unit since its claim lost the
    // claim when that change committed (and may have been claimed again since).
    if (current && current.version === job.version) this.access.remove(JOBS, id);
  }

  async release(job: ClaimedJob): Promise<void> {
    const id = jobId(job.kind, job.key);
    const claim = this.indexes.jobs.claims.get(id);
    // Only this claim: one made since (the job rescheduled, then claimed again) runs on.
    if (claim?.owner !== job.claimed_by || claim.version !== job.version) return;
    this.indexes.jobs.claims.delete(id);
    const current = stored(this.access.get<Job>(JOBS, id));
    if (current) this.indexes.jobs.requeue(id, current);
  }

  async nextDue({ clientId, kinds, skipClients, ahead }: DueFilter = {}): Promise<number | undefined> {
    const lead = leadOf(ahead);
    const queue = this.earliest(
      (q) => (clientId === undefined || q.client === clientId) && (kinds === undefined || kinds.includes(q.kind)) && !skipClients?.has(q.client),
      lead,
    );
    return queue && this.liveTop(queue) ? queue.heap.topAt() - lead(queue.client) : undefined;
  }

  async count(clientId?: string): Promise<number> {
    if (clientId !== undefined) return this.indexes.jobs.counts.get(clientId) ?? 0;
    let total = 0;
    for (const n of this.indexes.jobs.counts.values()) total += n;
    return total;
  }

  async removeByClient(clientId: string): Promise<number> {
    let removed = 0;
    // Every job of the client is in one of its queues (or claimed); collect ids from both.
    const ids = new Set<string>(this.indexes.jobs.claims.keys());
    for (const queue of this.indexes.jobs.ofClient(clientId)) for (const id of queue.heap.jobIds()) ids.add(id);
    for (const id of ids) {
      const job = this.access.get<Job>(JOBS, id);
      if (!job || job.client_id !== clientId) continue;
      this.access.remove(JOBS, id);
      removed += 1;
    }
    return removed;
  }

  /** Of the queues `accept` lets in, the one whose live top is due earliest (each client's due times shifted back by its lead). */
  private earliest(accept: (queue: JobQueue) => boolean, lead: (clientId: string) => number): JobQueue | undefined {
    let best: JobQueue | undefined;
    let bestAt = Infinity;
    let bestOrder = Infinity;
    for (const queue of this.indexes.jobs.queues.values()) {
      if (!accept(queue) || !this.liveTop(queue)) continue;
      const at = queue.heap.topAt() - lead(queue.client);
      const order = queue.heap.topOrder();
      // At one due time, the job queued first, whatever its kind or client (as on PostgreSQL).
      if (!best || at < bestAt || (at === bestAt && order < bestOrder)) {
        best = queue;
        bestAt = at;
        bestOrder = order;
      }
    }
    return best;
  }

  /** Whether a queue's earliest entry names a due, unclaimed job, once the stale entries before it are dropped. */
  private liveTop(queue: JobQueue): boolean {
    const { heap } = queue;
    for (let id = heap.topId(); id !== undefined; id = heap.topId()) {
      if (this.indexes.jobs.isLive(this.access.get<Job>(JOBS, id), id, heap.topAt())) return true;
      heap.pop();
    }
    return false;
  }
}
