import type { JournalEntry, RequestFilter } from '../../records/index.js';
import type { RequestLogRepository } from '../port.js';
import type { Db } from './db.js';
import { storable } from './rows.js';
import { Where } from './where.js';
/** The most journal entries one statement writes. */
export const JOURNAL_BATCH = 256;
/**
 * The most journal entries of one client a replica holds waiting for their statement:
 * past it that client's append fails (and is logged), the request is not held. Per
 * client, so one partner's flood never drops another partner's entries.
 */
export const JOURNAL_QUEUE = 1_000;

interface PendingEntry {
  clientId: string;
  entry: JournalEntry;
  written: () => void;
  failed: (error: unknown) => void;
}

/**
 * How far below the window a journal append's trim looks, in entries. The trim reads only
 * the entries that just left the window and this many before: a trim of everything below
 * the window would read every entry trimmed before too (dead rows until a vacuum), so an
 * append would cost more the longer the journal has run. Ids are taken by every replica, and a
 * statement that waited for another's ids does not see that one's entries: with many
 * replicas appending for one client at once some may fall further below, so one append
 * in JOURNAL_FULL_TRIM_EVERY trims everything below the window.
 */
const JOURNAL_TRIM_SLACK = 1_000;
const JOURNAL_FULL_TRIM_EVERY = 100;

/**
 * The request journal in the database: every replica's requests, bounded per client.
 * A replica writes its appends one statement at a time, in the order they were made:
 * those made while a statement runs go together in the next one (one round trip and one
 * commit for many requests under load, none held back when there is no load). An append
 * resolves once its statement committed, so whoever waits for it reads it back.
 */
export class PgRequestLog implements RequestLogRepository {
  private readonly queue: PendingEntry[] = [];
  /** Entries waiting in `queue`, per client. */
  private readonly waiting = new Map<string, number>();
  private writing: Promise<void> | undefined;
  /** Append statements sent (see JOURNAL_FULL_TRIM_EVERY). */
  private statements = 0;

  constructor(
    private readonly db: () => Db,
    readonly size: number,
  ) {}

  append(clientId: string, entry: JournalEntry): Promise<void> {
    if (this.size <= 0) return Promise.resolve();
    const waiting = this.waiting.get(clientId) ?? 0;
    if (waiting >= JOURNAL_QUEUE) return Promise.reject(new Error(`The request journal of this client is ${JOURNAL_QUEUE} entries behind the database: this entry is dropped.`));
    this.waiting.set(clientId, waiting + 1);
    return new Promise((written, failed) => {
      this.queue.push({ clientId, entry, written, failed });
      this.startWriting();
    });
  }

  private startWriting(): void {
    if (this.writing) return;
    this.writing = this.writeQueued().finally(() => {
      this.writing = undefined;
      // Appended after the writer's last look at the queue, before this ran.
      if (this.queue.length > 0) this.startWriting();
    });
  }

  /** Resolves when every append made so far has been written or has failed (close waits for it). */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, JOURNAL_BATCH);
      for (const { clientId } of batch) {
        const left = this.waiting.get(clientId)! - 1;
        if (left === 0) this.waiting.delete(clientId);
        else this.waiting.set(clientId, left);
      }
      try {
        await this.write(batch);
        for (const pending of batch) pending.written();
      } catch (error) {
        // One entry the database refuses must not take the others' with it: written again one by one.
        if (batch.length === 1) batch[0]!.failed(error);
        else for (const pending of batch) await this.write([pending]).then(pending.written, pending.failed);
      }
    }
  }

  /**
   * One statement numbers the entries, keeps them and drops those beyond the bound. The
   * ids come from the database, one counter per client, taken once per client and
   * statement (the entries numbered in the order they were made): replicas (and restarts)
   * number a client's entries in one order, where a per-process count would collide.
   * Counter rows are taken in client order, so two replicas' statements never deadlock.
   * Of a client's entries in the statement only those within the bound are kept: the
   * DELETE sees the table as it was before the statement, not the rows it adds.
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
       ), kept AS (
         INSERT INTO request_log (client_id, id, at_ms, operation_id, status, entry)
         SELECT client_id, id, at_ms, operation_id, status, entry || jsonb_build_object('id', id) FROM numbered WHERE id > last - $2
       ), added AS (
         SELECT client_id, count(*) AS n FROM input GROUP BY client_id
       )
       DELETE FROM request_log AS r USING taken AS t, added AS a
       WHERE r.client_id = t.client_id AND a.client_id = t.client_id
         AND r.id <= t.value - $2 AND r.id > t.value - $2 - a.n - $3`,
      [JSON.stringify(storable(rows)), this.size, ++this.statements % JOURNAL_FULL_TRIM_EVERY === 0 ? Number.MAX_SAFE_INTEGER : JOURNAL_TRIM_SLACK],
    );
  }

  async list(clientId: string, filter: RequestFilter): Promise<JournalEntry[]> {
    const where = new Where().add((p) => `client_id = ${p(clientId)}`);
    if (filter.operationId !== undefined) where.add((p) => `operation_id = ${p(filter.operationId)}`);
    if (filter.status !== undefined) where.add((p) => `status = ${p(filter.status)}`);
    if (filter.since !== undefined) where.add((p) => `at_ms >= ${p(filter.since)}`);
    if (filter.until !== undefined) where.add((p) => `at_ms <= ${p(filter.until)}`);
    const { rows } = await this.db().query<{ entry: JournalEntry }>(`SELECT entry FROM request_log ${where.sql} ORDER BY id`, where.values);
    return rows.map((row) => row.entry);
  }

  async clear(clientId: string): Promise<number> {
    const { rowCount } = await this.db().query('DELETE FROM request_log WHERE client_id = $1', [clientId]);
    return rowCount ?? 0;
  }

  async prune(olderThan: number): Promise<number> {
    const { rowCount } = await this.db().query('DELETE FROM request_log WHERE at_ms < $1', [olderThan]);
    return rowCount ?? 0;
  }
}
