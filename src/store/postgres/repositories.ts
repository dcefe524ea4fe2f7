import { Conflict, domainMessages } from '../../shared/index.js';
import type { Order } from '../../records/index.js';
import type { JournalEntry } from '../../records/index.js';
import type { Delivery, DeliveryStatus } from '../../records/index.js';
import { encodeCursor, positionOf, type Position } from '../cursor.js';
import { freeze } from '../freeze.js';
import type {
  ClaimedJob,
  ClaimOptions,
  ClockLead,
  ClientSettings,
  ClientSettingsRepository,
  CounterRepository,
  DeliveryQuery,
  DeliveryRepository,
  DueFilter,
  Job,
  JobKind,
  JobRepository,
  Meta,
  MetaRepository,
  OrderQuery,
  OrderRepository,
  Page,
  RequestFilter,
  RequestLogRepository,
  Stored,
  Unversioned,
} from '../port.js';
import { JOB_KINDS, shareOf } from '../port.js';

/** What a repository runs its statements on: the pool, or a transaction's client. */
export interface Db {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  /** Called when a statement scheduled a job of `clientId` due at `dueAt` (after commit, in a transaction). */
  scheduled(dueAt: number, clientId: string): void;
  /**
   * In a unit of work: holds a write whose outcome the caller does not wait for, to go
   * with the unit's next statement or its COMMIT (one round trip for several). Its
   * failure fails the unit (a record written first by another unit: a Conflict, and the
   * unit is tried again).
   */
  later?(text: string, values: unknown[]): void;
  /** In a unit of work: true the first time the unit writes an order of this batch (see PgOrders.insert). */
  newBatch?(batchId: string): boolean;
}

/** A write whose outcome nothing waits for: in a unit of work it goes with the unit's next statement or its COMMIT, else it is sent now. */
async function write(db: Db, text: string, values: unknown[]): Promise<void> {
  if (db.later) db.later(text, values);
  else await db.query(text, values);
}

/** A record as the port gives it: the stored JSON with its version, frozen. */
function stored<T>(data: unknown, version: number): Stored<T> {
  const record = { ...(data as object), version } as Stored<T>;
  return freeze(record);
}

/** A half of a UTF-16 surrogate pair without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * PostgreSQL text and jsonb cannot hold the NUL character (U+0000) nor half of a
 * surrogate pair (JSON's "\udc00", which JSON.parse accepts), both of which a client's
 * body or a receiver's answer may carry: each is stored as U+FFFD, the replacement
 * character, so the write never fails on it (a failed write would be a 500, and one
 * bad journal entry would fail the batch written with it).
 */
export const withoutNul = (text: string): string => {
  const clean = text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
  return LONE_SURROGATE.test(clean) ? (clean as unknown as { toWellFormed(): string }).toWellFormed() : clean;
};

/** A value as it is stored: every string NUL-free (see withoutNul). */
function storable<T>(value: T): T {
  if (typeof value === 'string') return withoutNul(value) as T;
  if (Array.isArray(value)) return value.map(storable) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) out[withoutNul(key)] = storable(child);
    return out as T;
  }
  return value;
}

/** The record without its version: what the `data` column holds, NUL-free. */
export function dataOf<T extends object>(record: T): Omit<T, 'version'> {
  const { version: _version, ...data } = record as T & { version?: number };
  return storable(data);
}

/** Infinity as a bigint parameter: the largest safe integer (no time or count reaches it). */
const finite = (n: number): number => (Number.isFinite(n) ? n : n > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER);

const isUniqueViolation = (error: unknown): boolean => (error as { code?: string }).code === '23505';

/** A page from rows fetched with one more than the limit: the extra row says there is a next page. */
function pageOf<T>(rows: Array<{ data: unknown; version: number }>, limit: number, total: number, position: (record: Stored<T>) => Position): Page<Stored<T>> {
  const items = rows.slice(0, limit).map((row) => stored<T>(row.data, row.version));
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeCursor(position(last)) : null, total };
}

/** WHERE clauses built with numbered parameters. */
class Where {
  readonly clauses: string[] = [];
  readonly values: unknown[] = [];

  add(clause: (p: (value: unknown) => string) => string): this {
    // A filter with a NUL matches nothing stored (stored text has none): compare it as stored.
    this.clauses.push(clause((value) => `$${this.values.push(typeof value === 'string' ? withoutNul(value) : value)}`));
    return this;
  }

  get sql(): string {
    return this.clauses.length > 0 ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

/**
 * The columns of an order's row besides `version` and `data`, in the order
 * `orderColumns` gives their values: what insert and update write, and what the
 * bulk seeder (seed.ts) writes.
 */
export const ORDER_COLUMNS = ['order_no', 'client_id', 'created_at', 'awb', 'batch_id', 'status', 'scenario', 'courier_code', 'order_code'] as const;

/** The values of `ORDER_COLUMNS` for an order's stored data (see dataOf). */
export const orderColumns = (data: Omit<Order, 'version'>): unknown[] => [
  data.order_no,
  data.client_id,
  data.created_at,
  data.awb,
  data.batch_id,
  data.status,
  data.scenario,
  data.courier_code,
  data.item.order_code,
];

/**
 * A new order's row whose batch id must be new too: when another order has it (one drawn
 * under an earlier seed of the database), the batch id written is NULL, which the column
 * refuses (23502, a Conflict; see PostgresStorage.inOneTrip). So the check goes with the
 * insert, held back to the unit's next round trip, instead of a look-up of its own.
 */
const NEW_BATCH_INSERT = `INSERT INTO orders (${ORDER_COLUMNS.join(', ')}, version, data)
  VALUES ($1, $2, $3, $4, CASE WHEN EXISTS (SELECT 1 FROM orders WHERE batch_id = $5) THEN NULL ELSE $5 END, $6, $7, $8, $9, 1, $10)`;

const UPDATE_ORDER = `UPDATE orders SET client_id = $2, created_at = $3, awb = $4, batch_id = $5, status = $6, scenario = $7, courier_code = $8, order_code = $9,
    data = $10, version = version + 1
  WHERE order_no = $1 AND version = $11`;

/**
 * The end of a held-back change of one row (after `WITH updated AS (... RETURNING 1)`):
 * a division by zero (STALE_VERSION) when no row was changed, which the unit of work
 * answers with a Conflict (see PostgresStorage.inOneTrip).
 */
export const ONE_ROW_OR_STALE = 'SELECT 1 / (SELECT count(*)::integer FROM updated)';
/** The SQLSTATE of ONE_ROW_OR_STALE's failure (division_by_zero). */
export const STALE_VERSION = '22012';

export class PgOrders implements OrderRepository {
  /** A taken order number meets the primary key, a taken batch id NEW_BATCH_INSERT's check, a taken AWB its unique index (update's Conflict). */
  readonly refusesTakenIds = true;

  constructor(private readonly db: () => Db) {}

  async get(orderNo: string): Promise<Stored<Order> | undefined> {
    const { rows } = await this.db().query<{ data: Order; version: number }>('SELECT data, version FROM orders WHERE order_no = $1', [orderNo]);
    return rows[0] && stored<Order>(rows[0].data, rows[0].version);
  }

  async byAwb(awb: string): Promise<Stored<Order> | undefined> {
    const { rows } = await this.db().query<{ data: Order; version: number }>('SELECT data, version FROM orders WHERE awb = $1', [awb]);
    return rows[0] && stored<Order>(rows[0].data, rows[0].version);
  }

  async batchExists(batchId: string): Promise<boolean> {
    const { rows } = await this.db().query('SELECT 1 FROM orders WHERE batch_id = $1 LIMIT 1', [batchId]);
    return rows.length > 0;
  }

  async insert(order: Unversioned<Order>): Promise<Stored<Order>> {
    const data = dataOf(order as Order);
    const db = this.db();
    const text = `INSERT INTO orders (${ORDER_COLUMNS.join(', ')}, version, data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10)`;
    if (db.later) {
      db.later(db.newBatch?.(data.batch_id) ? NEW_BATCH_INSERT : text, [...orderColumns(data), data]);
      return stored<Order>(data, 1);
    }
    try {
      await db.query(text, [...orderColumns(data), data]);
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(`Order ${order.order_no} already exists.`);
      throw error;
    }
    return stored<Order>(data, 1);
  }

  async update(order: Stored<Order>): Promise<Stored<Order>> {
    const data = dataOf(order as Order);
    const db = this.db();
    const values = [...orderColumns(data), data, order.version];
    if (db.later) {
      // In a unit of work it goes with the unit's next statement or its COMMIT; a changed
      // version (no row updated) then fails that trip, and the unit, with a Conflict.
      db.later(`WITH updated AS (${UPDATE_ORDER} RETURNING 1) ${ONE_ROW_OR_STALE}`, values);
      return stored<Order>(data, order.version + 1);
    }
    let rowCount: number | null;
    try {
      ({ rowCount } = await db.query(UPDATE_ORDER, values));
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(`The AWB ${data.awb} belongs to another order.`);
      throw error;
    }
    if (rowCount !== 1) throw new Conflict(domainMessages.staleVersion(`Order ${order.order_no}`));
    return stored<Order>(data, order.version + 1);
  }

  async remove(order: Stored<Order>): Promise<void> {
    const { rowCount } = await this.db().query('DELETE FROM orders WHERE order_no = $1 AND version = $2', [order.order_no, order.version]);
    if (rowCount !== 1) throw new Conflict(domainMessages.staleVersion(`Order ${order.order_no}`));
  }

  async list(clientId: string, query: OrderQuery): Promise<Page<Stored<Order>>> {
    const from = positionOf(query.cursor);
    const where = new Where().add((p) => `client_id = ${p(clientId)}`);
    if (query.status !== undefined) where.add((p) => `status = ${p(query.status)}`);
    if (query.scenario !== undefined) where.add((p) => `scenario = ${p(query.scenario)}`);
    if (query.courier_code !== undefined) where.add((p) => `courier_code = ${p(query.courier_code)}`);
    if (query.search !== undefined) where.add((p) => { const s = p(query.search); return `(order_no = ${s} OR awb = ${s} OR order_code = ${s})`; });
    const filters = { sql: where.sql, values: [...where.values] };
    if (from) where.add((p) => `(created_at, order_no) < (${p(from.rank)}, ${p(from.id)})`);
    const page = await this.db().query<{ data: Order; version: number }>(
      `SELECT data, version FROM orders ${where.sql} ORDER BY created_at DESC, order_no DESC LIMIT ${query.limit + 1}`,
      where.values,
    );
    const { rows } = await this.db().query<{ n: string }>(`SELECT count(*) AS n FROM orders ${filters.sql}`, filters.values);
    return pageOf<Order>(page.rows, query.limit, Number(rows[0]!.n), (o) => ({ rank: o.created_at, id: o.order_no }));
  }

  async createdBefore(olderThan: number, limit: number): Promise<Array<Stored<Order>>> {
    const { rows } = await this.db().query<{ data: Order; version: number }>(
      'SELECT data, version FROM orders WHERE created_at < $1 ORDER BY created_at, order_no LIMIT $2',
      [finite(olderThan), finite(limit)],
    );
    return rows.map((row) => stored<Order>(row.data, row.version));
  }

  async count(clientId?: string): Promise<number> {
    const { rows } = clientId === undefined
      ? await this.db().query<{ n: string }>('SELECT count(*) AS n FROM orders')
      : await this.db().query<{ n: string }>('SELECT count(*) AS n FROM orders WHERE client_id = $1', [clientId]);
    return Number(rows[0]!.n);
  }
}

export class PgDeliveries implements DeliveryRepository {
  constructor(private readonly db: () => Db) {}

  async get(id: string): Promise<Stored<Delivery> | undefined> {
    const { rows } = await this.db().query<{ data: Delivery; version: number }>('SELECT data, version FROM deliveries WHERE id = $1', [id]);
    return rows[0] && stored<Delivery>(rows[0].data, rows[0].version);
  }

  async insert(delivery: Unversioned<Delivery>): Promise<Stored<Delivery>> {
    const data = dataOf(delivery as Delivery);
    const db = this.db();
    const text = `INSERT INTO deliveries (id, client_id, seq, created_at, status, order_no, event, version, data) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8)`;
    const values = [data.id, data.client_id, data.seq, data.created_at, data.status, data.order_no, data.event, data];
    // In a unit of work it goes with the unit's next statement or its COMMIT (a taken id is then the unit's Conflict).
    if (db.later) {
      db.later(text, values);
      return stored<Delivery>(data, 1);
    }
    try {
      await db.query(text, values);
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(`Delivery ${delivery.id} already exists.`);
      throw error;
    }
    return stored<Delivery>(data, 1);
  }

  async update(delivery: Stored<Delivery>): Promise<Stored<Delivery>> {
    const data = dataOf(delivery as Delivery);
    const { rowCount } = await this.db().query(
      `UPDATE deliveries SET status = $2, order_no = $3, event = $4, data = $5, version = version + 1 WHERE id = $1 AND version = $6`,
      [data.id, data.status, data.order_no, data.event, data, delivery.version],
    );
    if (rowCount !== 1) throw new Conflict(domainMessages.staleVersion(`Delivery ${delivery.id}`));
    return stored<Delivery>(data, delivery.version + 1);
  }

  async remove(delivery: Stored<Delivery>): Promise<void> {
    await this.db().query('DELETE FROM deliveries WHERE id = $1', [delivery.id]);
  }

  async list(clientId: string, query: DeliveryQuery): Promise<Page<Stored<Delivery>>> {
    const from = positionOf(query.cursor);
    const where = new Where().add((p) => `client_id = ${p(clientId)}`);
    if (query.order_no !== undefined) where.add((p) => `order_no = ${p(query.order_no)}`);
    if (query.status !== undefined) where.add((p) => `status = ${p(query.status)}`);
    if (query.event !== undefined) where.add((p) => `event = ${p(query.event)}`);
    const { dueBy, dueAfter } = query;
    if (dueBy !== undefined) where.add((p) => `(data->>'next_attempt_at')::numeric <= ${p(finite(dueBy))}`);
    if (dueAfter !== undefined) where.add((p) => `(data->>'next_attempt_at')::numeric > ${p(finite(dueAfter))}`);
    const filters = { sql: where.sql, values: [...where.values] };
    if (from) where.add((p) => `(seq, id) < (${p(from.rank)}, ${p(from.id)})`);
    const page = await this.db().query<{ data: Delivery; version: number }>(
      `SELECT data, version FROM deliveries ${where.sql} ORDER BY seq DESC, id DESC LIMIT ${query.limit + 1}`,
      where.values,
    );
    const { rows } = await this.db().query<{ n: string }>(`SELECT count(*) AS n FROM deliveries ${filters.sql}`, filters.values);
    return pageOf<Delivery>(page.rows, query.limit, Number(rows[0]!.n), (d) => ({ rank: d.seq, id: d.id }));
  }

  async countByStatus(clientId: string, status: DeliveryStatus, upTo = Number.MAX_SAFE_INTEGER): Promise<number> {
    const { rows } = await this.db().query<{ n: string }>('SELECT count(*) AS n FROM (SELECT 1 FROM deliveries WHERE client_id = $1 AND status = $2 LIMIT $3) AS counted', [
      clientId,
      status,
      finite(upTo),
    ]);
    return Number(rows[0]!.n);
  }

  async settledBefore(olderThan: number, limit: number): Promise<Array<Stored<Delivery>>> {
    const { rows } = await this.db().query<{ data: Delivery; version: number }>(
      `SELECT data, version FROM deliveries WHERE created_at < $1 AND status IN ('delivered', 'failed') ORDER BY created_at, id LIMIT $2`,
      [finite(olderThan), finite(limit)],
    );
    return rows.map((row) => stored<Delivery>(row.data, row.version));
  }
}

/** Settings read along with a request's clock (see PostgresStorage.requestScope), by client: each used once. */
export type Prefetched = Map<string, { data: ClientSettings; version: number } | undefined>;

export class PgSettings implements ClientSettingsRepository {
  constructor(
    private readonly db: () => Db,
    /** The current request's settings read along with its clock, if any. */
    private readonly prefetched: () => Prefetched | undefined = () => undefined,
  ) {}

  async get(clientId: string): Promise<Stored<ClientSettings> | undefined> {
    const db = this.db();
    const prefetched = this.prefetched();
    // Outside a unit of work only: a unit reads what it changes afresh.
    if (!db.later && prefetched?.has(clientId)) {
      const row = prefetched.get(clientId);
      prefetched.delete(clientId);
      return row && stored<ClientSettings>(row.data, row.version);
    }
    const { rows } = await db.query<{ data: ClientSettings; version: number }>('SELECT data, version FROM client_settings WHERE client_id = $1', [clientId]);
    return rows[0] && stored<ClientSettings>(rows[0].data, rows[0].version);
  }

  async put(settings: ClientSettings | Stored<ClientSettings>): Promise<Stored<ClientSettings>> {
    this.prefetched()?.delete(settings.client_id);
    const what = `The settings of client ${settings.client_id}`;
    const data = dataOf(settings as ClientSettings & { version?: number });
    if ('version' in settings) {
      const { rowCount } = await this.db().query('UPDATE client_settings SET data = $2, version = version + 1 WHERE client_id = $1 AND version = $3', [
        settings.client_id,
        data,
        settings.version,
      ]);
      if (rowCount !== 1) throw new Conflict(domainMessages.staleVersion(what));
      return stored<ClientSettings>(data, settings.version + 1);
    }
    try {
      await this.db().query('INSERT INTO client_settings (client_id, version, data) VALUES ($1, 1, $2)', [settings.client_id, data]);
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(`${what} already exist.`);
      throw error;
    }
    return stored<ClientSettings>(data, 1);
  }
}

/** How many numbers of a counter in blocks a replica takes at once (see PgCounters). */
export const COUNTER_BLOCK = 32;

/**
 * Counters whose values are names only (order numbers, batch ids, AWBs: drawn through a
 * permutation; a client's delivery numbers, hashed into its delivery ids; never compared):
 * a replica takes them in blocks. The sandbox-wide delivery sequence and journal ids order
 * what they number, across replicas, so they are taken one by one.
 */
const inBlocks = (name: string): boolean => name === 'order' || name === 'batch' || name.startsWith('awb:') || name.startsWith('delivery:');

/**
 * Counters in the `counters` table. Order numbers, batch ids and AWBs come from blocks of
 * COUNTER_BLOCK that the replica takes from the row at once (`value + 32`): a create then
 * takes its two numbers without a round trip, and the row is locked for one create in
 * thirty-two. A replica of the version before takes `value + 1` of the same row, so during
 * a rolling upgrade both draw disjoint numbers from one row. With one replica the numbers
 * come in the order the embedded store gives them; at close the rest of the block goes
 * back when no one took from the row since, so a restart goes on where it stopped. (A
 * replica that dies leaves its block's rest unused: a gap, never a repeat.)
 */
export class PgCounters implements CounterRepository {
  private readonly blocks = new Map<string, { next: number; last: number }>();
  private readonly taking = new Map<string, Promise<void>>();
  private closing = false;

  constructor(private readonly db: () => Db) {}

  async next(name: string): Promise<number> {
    if (this.closing || !inBlocks(name)) return this.take(name, 1);
    for (;;) {
      const block = this.blocks.get(name);
      if (block && block.next <= block.last) return block.next++;
      // One block at a time per counter: units waiting for it share it.
      let taking = this.taking.get(name);
      if (!taking) {
        taking = this.take(name, COUNTER_BLOCK)
          .then((last) => void this.blocks.set(name, { next: last - COUNTER_BLOCK + 1, last }))
          .finally(() => this.taking.delete(name));
        this.taking.set(name, taking);
      }
      await taking;
      if (this.closing) return this.take(name, 1);
    }
  }

  /** Gives back the numbers of this replica's blocks not handed out, where the row still ends at its block; numbers are taken one by one after. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled(this.taking.values());
    const rests = [...this.blocks].filter(([, block]) => block.next <= block.last);
    this.blocks.clear();
    for (const [name, { next, last }] of rests) {
      await this.db().query('UPDATE counters SET value = $2 WHERE name = $1 AND value = $3', [name, next - 1, last]).catch(() => undefined);
    }
  }

  /** Adds `count` to the counter (made at 0 if new): its new value, the last of the `count` numbers taken. */
  private async take(name: string, count: number): Promise<number> {
    const { rows } = await this.db().query<{ value: string }>(
      'INSERT INTO counters (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value RETURNING value',
      [name, count],
    );
    return Number(rows[0]!.value);
  }
}

export class PgMeta implements MetaRepository {
  constructor(private readonly db: () => Db) {}

  async get<K extends keyof Meta>(key: K): Promise<Meta[K] | undefined> {
    const { rows } = await this.db().query<{ value: Meta[K] }>('SELECT value FROM meta WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  async set<K extends keyof Meta>(key: K, value: Meta[K]): Promise<void> {
    await this.db().query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, JSON.stringify(value)]);
  }

  async setIfAbsent<K extends keyof Meta>(key: K, value: Meta[K]): Promise<Meta[K]> {
    // The no-op update makes the row come back when another replica inserted it first.
    const { rows } = await this.db().query<{ value: Meta[K] }>('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = meta.value RETURNING value', [key, JSON.stringify(value)]);
    return rows[0]!.value;
  }
}

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

/**
 * The SQL of a job's due time on the clock `ahead` is measured from: `due_at` less its
 * client's lead (0 for a client not named). The leads go in as two arrays.
 */
function dueOn(where: Where, ahead: ClockLead | undefined): string {
  const lead = leadsOf(ahead);
  if (lead.length === 0) return 'due_at';
  const clients = where.values.push(lead.map(([client]) => client));
  const leads = where.values.push(lead.map(([, ms]) => ms));
  return `(due_at - COALESCE((SELECT l.ms FROM unnest($${clients}::text[], $${leads}::bigint[]) AS l(client_id, ms) WHERE l.client_id = jobs.client_id), 0))`;
}

/** The clients of `ahead` whose clock runs ahead of (or behind) the sandbox's. */
const leadsOf = (ahead: ClockLead | undefined): Array<[string, number]> => [...(ahead ?? [])].filter(([, ms]) => Math.round(ms) !== 0).map(([client, ms]) => [client, Math.round(ms)]);

/**
 * Adds "due by `until` on the clock `ahead` is measured from": for a client with a lead,
 * `due_at` up to `until` plus its lead; for the rest, up to `until`. Each part is an index
 * range (jobs_by_client, jobs_by_due), where a comparison of `dueOn`'s expression would
 * be computed for every row of the table, on every wake-up of every replica.
 */
function dueBy(where: Where, until: number, ahead: ClockLead | undefined): void {
  const leads = leadsOf(ahead);
  if (leads.length === 0) {
    where.add((p) => `due_at <= ${p(finite(until))}`);
    return;
  }
  where.add((p) => {
    const own = leads.map(([client, ms]) => `(client_id = ${p(client)} AND due_at <= ${p(finite(until + ms))})`);
    return `((NOT (client_id = ANY(${p(leads.map(([client]) => client))})) AND due_at <= ${p(finite(until))}) OR ${own.join(' OR ')})`;
  });
}

const jobOf = (row: JobRow): Stored<Job> => Object.freeze({ kind: row.kind, key: row.key, client_id: row.client_id, due_at: Number(row.due_at), version: row.version });

/**
 * Jobs as rows, claimed with leases: a claim takes due rows with `FOR UPDATE SKIP
 * LOCKED`, so replicas claiming at once never take the same job, and writes the
 * claimant and its lease; a job whose lease ran out (its replica died) is claimable
 * again. Scheduling a job (again) drops its claim and raises its version, so the old
 * claimant's completion does not remove it.
 */
export class PgJobs implements JobRepository {
  constructor(private readonly db: () => Db) {}

  async schedule(job: Job): Promise<void> {
    const db = this.db();
    const text = `INSERT INTO jobs (kind, key, client_id, due_at, version) VALUES ($1, $2, $3, $4, 1)
       ON CONFLICT (kind, key) DO UPDATE SET client_id = excluded.client_id, due_at = excluded.due_at, version = jobs.version + 1, claimed_by = NULL, lease_until = NULL,
         seq = CASE WHEN jobs.due_at = excluded.due_at THEN jobs.seq ELSE nextval('jobs_seq') END`;
    await write(db, text, [job.kind, job.key, job.client_id, job.due_at]);
    db.scheduled(job.due_at, job.client_id);
  }

  async cancel(kind: JobKind, key: string): Promise<void> {
    await this.db().query('DELETE FROM jobs WHERE kind = $1 AND key = $2', [kind, key]);
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
    await this.db().query('UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE kind = $1 AND key = $2 AND claimed_by = $3', [job.kind, job.key, job.claimed_by]);
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
 * the entries that just left the window and this many before: trimming everything below
 * the window read every entry trimmed before too, dead until a vacuum, and an append
 * under load came to cost milliseconds, growing. Ids are taken by every replica, and a
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
