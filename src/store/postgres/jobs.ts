import type { JobRepository } from '../port.js';
import { shareOf } from '../port.js';
import { write, type Db } from './db.js';
import { dueBy, dueOn, leadsOf } from './job-due.js';
import { withoutNul } from './rows.js';
import { finite, Where } from './where.js';
import type { ClaimedJob, ClaimOptions, DueFilter, Job, JobKind, Stored } from '../../records/index.js';
import { JOB_KINDS } from '../../records/index.js';

interface JobRow {
  kind: JobKind;
  key: string;
  client_id: string;
  due_at: string;
  version: number;
  claimed_by: string | null;
  lease_until: string | null;
  /** When it was (last) scheduled: the order among jobs due at one time (none: scheduled before there was one). */
  seq: string | null;
}

const jobOf = (row: JobRow): Stored<Job> => Object.freeze({ kind: row.kind, key: row.key, client_id: row.client_id, due_at: Number(row.due_at), version: row.version });

/**
 * Jobs as rows, claimed with leases: a claim takes due rows with `FOR UPDATE SKIP
 * LOCKED`, so replicas claiming at once never take the same job, and writes the
 * claimant and its lease; a job whose lease ran out (its replica died) is claimable
 * again. Scheduling a job (again) drops its claim and gives it a new version (from one
 * sequence, see the schema), so the old claimant's completion does not remove it.
 */
export class PgJobs implements JobRepository {
  constructor(private readonly db: () => Db) {}

  async schedule(job: Job): Promise<void> {
    const db = this.db();
    const text = `INSERT INTO jobs (kind, key, client_id, due_at, version) VALUES ($1, $2, $3, $4, nextval('job_versions'))
       ON CONFLICT (kind, key) DO UPDATE SET client_id = excluded.client_id, due_at = excluded.due_at, version = excluded.version, claimed_by = NULL, lease_until = NULL,
         seq = CASE WHEN jobs.due_at = excluded.due_at THEN jobs.seq ELSE nextval('jobs_seq') END`;
    await write(db, text, [job.kind, job.key, job.client_id, job.due_at]);
    db.scheduled(job.due_at, job.client_id);
  }

  async cancel(kind: JobKind, key: string): Promise<void> {
    await write(this.db(), 'DELETE FROM jobs WHERE kind = $1 AND key = $2', [kind, key]);
  }

  async get(kind: JobKind, key: string): Promise<Stored<Job> | undefined> {
    const { rows } = await this.db().query<JobRow>('SELECT * FROM jobs WHERE kind = $1 AND key = $2', [kind, key]);
    return rows[0] && jobOf(rows[0]);
  }

  async claim(options: ClaimOptions): Promise<ClaimedJob[]> {
    const { perClient } = options;
    const share = shareOf(perClient);
    return share === Infinity ? this.claimEarliest(options) : this.claimInRounds(options, share);
  }

  /** Without a share: the due jobs earliest first, whoever's they are. */
  private async claimEarliest({ until, limit, owner, leaseMs, kinds, skipClients, clientId, ahead }: ClaimOptions): Promise<ClaimedJob[]> {
    const now = Date.now();
    const where = new Where();
    const due = dueOn(where, ahead);
    dueBy(where, until, ahead);
    where.add((p) => `(claimed_by IS NULL OR lease_until < ${p(now)})`);
    if (clientId !== undefined) where.add((p) => `client_id = ${p(clientId)}`);
    if (kinds !== undefined) where.add((p) => `kind = ANY(${p([...kinds])})`);
    if (skipClients !== undefined && skipClients.size > 0) where.add((p) => `NOT (client_id = ANY(${p([...skipClients])}))`);
    const leaseUntil = now + leaseMs;
    const ownerAt = where.values.push(owner);
    const leaseAt = where.values.push(leaseUntil);
    const { rows } = await this.db().query<JobRow>(
      `WITH chosen AS (SELECT kind, key FROM jobs ${where.sql} ORDER BY ${due}, seq NULLS FIRST LIMIT ${limit} FOR UPDATE SKIP LOCKED)
       UPDATE jobs SET claimed_by = $${ownerAt}, lease_until = $${leaseAt}
       FROM chosen WHERE jobs.kind = chosen.kind AND jobs.key = chosen.key
       RETURNING jobs.*`,
      where.values,
    );
    const lead = (client: string): number => ahead?.get(client) ?? 0;
    // RETURNING keeps no order: earliest due first, and at one due time in the order scheduled.
    const at = (row: JobRow): number => Number(row.due_at) - lead(row.client_id);
    return rows
      .sort((a, b) => at(a) - at(b) || Number(a.seq) - Number(b.seq))
      .map((row) => ({ ...jobOf(row), claimed_by: owner, lease_until: leaseUntil }));
  }

  /**
   * With a share per client, in rounds as the embedded store claims (see
   * ClaimOptions.perClient): each client's earliest due job, then each one's second, and so
   * on. The clients are found by skipping through the jobs_by_client index (one probe per
   * client with jobs), and each offers its earliest `perClient` due jobs of each kind asked
   * for, read in the order of the jobs_by_client_kind index (due time, then the order
   * scheduled; a client's lead only moves its bound). A claim then reads about as many rows
   * as it offers, however large a backlog has grown, whatever the leads, and at one due
   * time as well (claimsPerClient). The offers are read without locks; only the rows
   * chosen are locked (`SKIP LOCKED`, each checked again as it is locked: unclaimed and
   * still due), so a claim never holds rows it does not take, which another claim at the
   * same moment (another replica's, an advance's) would have skipped.
   */
  private async claimInRounds({ until, limit, owner, leaseMs, kinds, skipClients, clientId, ahead }: ClaimOptions, perClient: number): Promise<ClaimedJob[]> {
    const now = Date.now();
    const values: unknown[] = [];
    const p = (value: unknown): string => `$${values.push(value)}`;
    const leads = leadsOf(ahead);
    const clientFilters = ['c.client_id IS NOT NULL'];
    if (skipClients !== undefined && skipClients.size > 0) clientFilters.push(`NOT (c.client_id = ANY(${p([...skipClients].map(withoutNul))}::text[]))`);
    const lead = leads.length > 0 ? `COALESCE((SELECT l.ms FROM unnest(${p(leads.map(([client]) => client))}::text[], ${p(leads.map(([, ms]) => ms))}::bigint[]) AS l(client_id, ms) WHERE l.client_id = c.client_id), 0)` : '0';
    // One client's claim (an advance) starts from that client; else every client with jobs.
    const clients =
      clientId !== undefined
        ? `clients_with_jobs AS (SELECT ${p(withoutNul(clientId))}::text COLLATE "C" AS client_id)`
        : `clients_with_jobs AS (
         (SELECT client_id FROM jobs ORDER BY client_id LIMIT 1)
         UNION ALL
         SELECT (SELECT j.client_id FROM jobs AS j WHERE j.client_id > c.client_id ORDER BY j.client_id LIMIT 1)
         FROM clients_with_jobs AS c WHERE c.client_id IS NOT NULL
       )`;
    const now_ = p(now);
    const { rows } = await this.db().query<JobRow & { rank: string }>(
      `WITH RECURSIVE ${clients},
       due_clients AS (SELECT client_id, lead_ms, ${p(finite(until))}::bigint + lead_ms AS bound
         FROM (SELECT c.client_id, ${lead}::bigint AS lead_ms FROM clients_with_jobs AS c WHERE ${clientFilters.join(' AND ')}) AS leads),
       offered AS (
         SELECT o.kind, o.key, o.due_at - d.lead_ms AS due, o.seq, d.bound, row_number() OVER (PARTITION BY d.client_id ORDER BY o.due_at, o.seq NULLS FIRST) AS rank
         FROM due_clients AS d,
         LATERAL (
           SELECT j.kind, j.key, j.due_at, j.seq
           FROM unnest(${p([...(kinds ?? JOB_KINDS)])}::text[]) AS k(kind),
           LATERAL (
             SELECT kind, key, due_at, seq FROM jobs
             WHERE client_id = d.client_id AND kind = k.kind AND due_at <= d.bound
               AND (claimed_by IS NULL OR lease_until < ${now_})
             ORDER BY due_at, seq NULLS FIRST LIMIT ${perClient}
           ) AS j
           ORDER BY j.due_at, j.seq NULLS FIRST LIMIT ${perClient}
         ) AS o
       ),
       chosen AS (SELECT kind, key, rank, bound FROM offered ORDER BY rank, due, seq NULLS FIRST LIMIT ${limit}),
       locked AS (
         SELECT j.kind, j.key, c.rank FROM jobs AS j JOIN chosen AS c ON j.kind = c.kind AND j.key = c.key
         WHERE (j.claimed_by IS NULL OR j.lease_until < ${now_}) AND j.due_at <= c.bound
         FOR UPDATE OF j SKIP LOCKED
       )
       UPDATE jobs SET claimed_by = ${p(owner)}, lease_until = ${p(now + leaseMs)}
       FROM locked WHERE jobs.kind = locked.kind AND jobs.key = locked.key
       RETURNING jobs.*, locked.rank`,
      values,
    );
    const leadOf = (client: string): number => ahead?.get(client) ?? 0;
    // RETURNING keeps no order: by round, then earliest due, then in the order scheduled.
    const at = (row: JobRow): number => Number(row.due_at) - leadOf(row.client_id);
    return rows
      .sort((a, b) => Number(a.rank) - Number(b.rank) || at(a) - at(b) || Number(a.seq) - Number(b.seq))
      .map((row) => ({ ...jobOf(row), claimed_by: owner, lease_until: now + leaseMs }));
  }

  async complete(job: ClaimedJob): Promise<void> {
    await write(this.db(), 'DELETE FROM jobs WHERE kind = $1 AND key = $2 AND version = $3', [job.kind, job.key, job.version]);
  }

  async release(job: ClaimedJob): Promise<void> {
    // Only this claim: one made since (the job rescheduled, then claimed again) runs on.
    await this.db().query('UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE kind = $1 AND key = $2 AND claimed_by = $3 AND version = $4', [job.kind, job.key, job.claimed_by, job.version]);
  }

  async nextDue({ clientId, kinds, skipClients, ahead }: DueFilter = {}): Promise<number | undefined> {
    const where = new Where();
    where.add((p) => `(claimed_by IS NULL OR lease_until < ${p(Date.now())})`);
    if (clientId !== undefined) where.add((p) => `client_id = ${p(clientId)}`);
    if (kinds !== undefined) where.add((p) => `kind = ANY(${p([...kinds])})`);
    if (skipClients !== undefined && skipClients.size > 0) where.add((p) => `NOT (client_id = ANY(${p([...skipClients])}))`);
    const leads = leadsOf(ahead);
    let text = `SELECT min(due_at) AS at FROM jobs ${where.sql}`;
    if (leads.length > 0) {
      // The earliest of the clients without a lead (one index range), and each lead
      // client's earliest (its own range) less its lead: never a scan of the table.
      const clients = where.values.push(leads.map(([client]) => client));
      const ms = where.values.push(leads.map(([, lead]) => lead));
      text = `SELECT min(at) AS at FROM (
          SELECT min(due_at) AS at FROM jobs ${where.sql} AND NOT (client_id = ANY($${clients}::text[]))
          UNION ALL
          SELECT (SELECT min(due_at) FROM jobs ${where.sql} AND client_id = l.lead_client) - l.lead_ms FROM unnest($${clients}::text[], $${ms}::bigint[]) AS l(lead_client, lead_ms)
        ) AS firsts`;
    }
    const { rows } = await this.db().query<{ at: string | null }>(text, where.values);
    return rows[0]?.at === null || rows[0] === undefined ? undefined : Number(rows[0].at);
  }

  async heldElsewhere(clientId: string, until: number, owner: string): Promise<number | undefined> {
    const { rows } = await this.db().query<{ at: string | null }>(
      'SELECT min(due_at) AS at FROM jobs WHERE client_id = $1 AND due_at <= $2 AND claimed_by IS NOT NULL AND claimed_by <> $3 AND lease_until >= $4',
      [clientId, finite(until), owner, Date.now()],
    );
    return rows[0]?.at === null || rows[0] === undefined ? undefined : Number(rows[0].at);
  }

  async count(clientId?: string): Promise<number> {
    const { rows } = clientId === undefined
      ? await this.db().query<{ n: string }>('SELECT count(*) AS n FROM jobs')
      : await this.db().query<{ n: string }>('SELECT count(*) AS n FROM jobs WHERE client_id = $1', [clientId]);
    return Number(rows[0]!.n);
  }

  async removeByClient(clientId: string): Promise<number> {
    const { rowCount } = await this.db().query('DELETE FROM jobs WHERE client_id = $1', [clientId]);
    return rowCount ?? 0;
  }
}
