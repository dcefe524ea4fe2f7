import type { JournalEntry, RequestFilter } from '../../records/index.js';
import type { RequestLogRepository } from '../port.js';
import type { Db } from './db.js';
import { storableJson } from './rows.js';
import { Where } from './where.js';
import { BATCH_INTERVAL_MS, IntervalBatches } from './interval-batch.js';
import { Unavailable } from '../../shared/index.js';

/** The most journal entries one statement writes. */
export const JOURNAL_BATCH = 256;
/**
 * The most journal entries of one client a replica holds waiting for their statement or in it:
 * past it that client's append fails (and is logged), the request is not held. Per
 * client, so one partner's flood never drops another partner's entries.
 */
export const JOURNAL_QUEUE = 1_000;

interface PendingEntry {
  clientId: string;
  entry: JournalEntry;
}

/**
 * How far below the window the background trim looks, beyond the entries added since the
 * last trim: a trim of everything below the window would read every entry trimmed before
 * too (dead rows until a vacuum), so a trim would cost more the longer the journal has run.
 * Ids are taken by every replica, so another replica's entries may have pushed some of
 * this one's further below: one trim in JOURNAL_FULL_TRIM_EVERY trims everything below.
 */
const JOURNAL_TRIM_SLACK = 1_000;
const JOURNAL_FULL_TRIM_EVERY = 100;
/** How often, at most, the background trim runs. */
const JOURNAL_TRIM_MS = 1_000;
/**
 * How long a batch the database could not take waits before its one more try: a connection
 * dropped under the batch (a database restart, sessions ended by an operator) leaves other
 * pooled connections of the same fate, which a try at once would meet too.
 */
const UNAVAILABLE_RETRY_MS = 1_000;

/**
 * The request journal in the database: every replica's requests, bounded per client.
 * A replica holds its appends for a short interval (BATCH_INTERVAL_MS) and writes all
 * it holds, every client's, in one statement; an append resolves once that statement
 * committed. A read through this replica first writes what it holds (read your own
 * writes); other replicas' entries show within their interval. Entries beyond the bound
 * are dropped in the background (a read shows only those within it meanwhile).
 */
export class PgRequestLog implements RequestLogRepository {
  private readonly batches: IntervalBatches<PendingEntry>;
  /** Entries held, per client (see JOURNAL_QUEUE). */
  private readonly waiting = new Map<string, number>();
  /** Entries written per client since the last trim. */
  private readonly untrimmed = new Map<string, number>();
  private lastTrim = 0;
  private trims = 0;
  private trimming: Promise<void> | undefined;

  constructor(
    private readonly db: () => Db,
    readonly size: number,
    intervalMs = BATCH_INTERVAL_MS,
    private readonly retryMs = UNAVAILABLE_RETRY_MS,
  ) {
    this.batches = new IntervalBatches((batch) => this.writeBatch(batch), { intervalMs, most: JOURNAL_BATCH });
  }

  append(clientId: string, entry: JournalEntry): Promise<void> {
    if (this.size <= 0) return Promise.resolve();
    const waiting = this.waiting.get(clientId) ?? 0;
    if (waiting >= JOURNAL_QUEUE) return Promise.reject(new Error(`The request journal of this client is ${JOURNAL_QUEUE} entries behind the database: this entry is dropped.`));
    this.waiting.set(clientId, waiting + 1);
    return this.batches.add({ clientId, entry });
  }

  /** Resolves when every append made so far has been written or has failed, and the trim is done (close waits for it). */
  async drained(): Promise<void> {
    await this.batches.drained();
    await this.trimming;
  }

  /** Writes the batch; an entry the database refuses must not take the others' with it: then written again one by one. */
  private async writeBatch(batch: PendingEntry[]): Promise<unknown[]> {
    try {
      return await this.writeOrEach(batch);
    } finally {
      for (const { clientId } of batch) {
        const left = this.waiting.get(clientId)! - 1;
        if (left === 0) this.waiting.delete(clientId);
        else this.waiting.set(clientId, left);
      }
    }
  }

  /**
   * A batch the database could not take (Unavailable) is tried once more after a pause, whole:
   * an entry by entry write is for an entry the database refuses, not for an outage. Should
   * the first try have committed before its connection dropped, its entries show twice.
   */
  private async writeOrEach(batch: PendingEntry[]): Promise<unknown[]> {
    const errors: unknown[] = [];
    try {
      await this.write(batch).catch(async (error: unknown) => {
        if (!(error instanceof Unavailable)) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.retryMs));
        await this.write(batch);
      });
      for (const { clientId } of batch) this.untrimmed.set(clientId, (this.untrimmed.get(clientId) ?? 0) + 1);
    } catch (error) {
      if (batch.length === 1 || error instanceof Unavailable) return batch.map(() => error);
      for (const [i, pending] of batch.entries()) {
        await this.write([pending]).then(
          () => this.untrimmed.set(pending.clientId, (this.untrimmed.get(pending.clientId) ?? 0) + 1),
          (failed: unknown) => void (errors[i] = failed),
        );
      }
    }
    this.trimSoon();
    return errors;
  }

  /**
   * One statement numbers the entries and keeps those within the bound. The ids come
   * from the database, one counter per client, taken once per client and statement (the
   * entries numbered in the order they were made): replicas (and restarts) number a
   * client's entries in one order, where a per-process count would collide. Counter rows
   * are taken in client order, so two replicas' statements never deadlock.
   */
  private async write(batch: PendingEntry[]): Promise<void> {
    const rows = batch.map(({ clientId, entry }) => {
      const at = Date.parse(entry.at);
      return { c: clientId, t: Number.isFinite(at) ? at : 0, o: entry.operation_id, s: entry.status ?? null, e: entry };
    });
    await this.db().query(
      `WITH input AS (
         SELECT x.n, x.e->>'c' AS client_id, (x.e->>'t')::bigint AS at_ms, x.e->>'o' AS operation_id, (x.e->>'s')::integer AS status, x.e->'e' AS entry
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(e, n)
       ), taken AS (
         INSERT INTO counters (name, value)
         SELECT 'journal:' || client_id, count(*) FROM input GROUP BY client_id ORDER BY client_id
         ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value
         RETURNING substr(name, 9) AS client_id, value
       ), numbered AS (
         SELECT i.client_id, i.at_ms, i.operation_id, i.status, i.entry, t.value AS last,
           t.value - count(*) OVER (PARTITION BY i.client_id) + row_number() OVER (PARTITION BY i.client_id ORDER BY i.n) AS id
         FROM input AS i JOIN taken AS t ON t.client_id = i.client_id
       )
       INSERT INTO request_log (client_id, id, at_ms, operation_id, status, entry)
       SELECT client_id, id, at_ms, operation_id, status, entry || jsonb_build_object('id', id) FROM numbered WHERE id > last - $2`,
      [storableJson(rows), this.size],
    );
  }

  /** Starts the background trim when the last one is JOURNAL_TRIM_MS old and none runs. */
  private trimSoon(): void {
    if (this.trimming || this.untrimmed.size === 0 || Date.now() - this.lastTrim < JOURNAL_TRIM_MS) return;
    this.lastTrim = Date.now();
    const clients = [...this.untrimmed];
    this.untrimmed.clear();
    const full = ++this.trims % JOURNAL_FULL_TRIM_EVERY === 0;
    // A failed trim is made good by the next full one; reads show only the bound meanwhile.
    this.trimming = this.trim(clients, full)
      .catch(() => undefined)
      .finally(() => {
        this.trimming = undefined;
      });
  }

  /** Drops the entries of `clients` below each one's window (an index range from just below it, unless `full`). */
  private async trim(clients: Array<[string, number]>, full: boolean): Promise<void> {
    await this.db().query(
      `DELETE FROM request_log AS r
       USING (SELECT substr(c.name, 9) AS client_id, c.value - $3 AS below, c.value - $3 - a.added - $4 AS from_id
              FROM unnest($1::text[], $2::bigint[]) AS a(client_id, added) JOIN counters AS c ON c.name = 'journal:' || a.client_id) AS w
       WHERE r.client_id = w.client_id AND r.id <= w.below AND r.id > w.from_id`,
      [clients.map(([client]) => client), clients.map(([, added]) => added), this.size, full ? Number.MAX_SAFE_INTEGER : JOURNAL_TRIM_SLACK],
    );
  }

  /** The client's entries within the bound, after what this replica holds is written. */
  async list(clientId: string, filter: RequestFilter): Promise<JournalEntry[]> {
    await this.batches.flush();
    const where = new Where().add((p) => `client_id = ${p(clientId)}`);
    // Entries the background trim has not dropped yet are beyond the bound all the same.
    where.add((p) => `id > COALESCE((SELECT value FROM counters WHERE name = ${p(`journal:${clientId}`)}), 0) - ${p(this.size)}`);
    if (filter.operationId !== undefined) where.add((p) => `operation_id = ${p(filter.operationId)}`);
    if (filter.status !== undefined) where.add((p) => `status = ${p(filter.status)}`);
    if (filter.since !== undefined) where.add((p) => `at_ms >= ${p(filter.since)}`);
    if (filter.until !== undefined) where.add((p) => `at_ms <= ${p(filter.until)}`);
    const { rows } = await this.db().query<{ entry: JournalEntry }>(`SELECT entry FROM request_log ${where.sql} ORDER BY id`, where.values);
    return rows.map((row) => row.entry);
  }

  async clear(clientId: string): Promise<number> {
    await this.batches.flush();
    const { rowCount } = await this.db().query('DELETE FROM request_log WHERE client_id = $1', [clientId]);
    return rowCount ?? 0;
  }

  async prune(olderThan: number, clientId?: string): Promise<number> {
    const { rowCount } =
      clientId === undefined
        ? await this.db().query('DELETE FROM request_log WHERE at_ms < $1', [olderThan])
        : await this.db().query('DELETE FROM request_log WHERE client_id = $2 AND at_ms < $1', [olderThan, clientId]);
    return rowCount ?? 0;
  }
}
