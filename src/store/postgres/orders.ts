import { Conflict, domainMessages } from '../../shared/index.js';
import type { Order, OrderQuery, Page, Stored, Unversioned } from '../../records/index.js';
import { positionOf } from '../cursor.js';
import type { OrderRepository } from '../port.js';
import { isUniqueViolation, ONE_ROW_OR_STALE, type Db } from './db.js';
import { listPage } from './listing.js';
import { pointRead } from './point-reads.js';
import type { PreReadOrder } from './request-scope.js';
import { dataOf, stored } from './rows.js';
import { finite, Where } from './where.js';
/**
 * The columns of an order's row besides `version` and `data`, in the order
 * `orderColumns` gives their values: what insert and update write, and what the
 * bulk seeder (scripts/seed-postgres.ts) writes.
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
 * refuses (23502, a Conflict; see inOneTrip in unit-of-work.ts). So the check goes with the
 * insert, held back to the unit's next round trip, instead of a look-up of its own.
 */
const NEW_BATCH_INSERT = `INSERT INTO orders (${ORDER_COLUMNS.join(', ')}, version, data)
  VALUES ($1, $2, $3, $4, CASE WHEN EXISTS (SELECT 1 FROM orders WHERE batch_id = $5) THEN NULL ELSE $5 END, $6, $7, $8, $9, 1, $10)`;

const UPDATE_ORDER = `UPDATE orders SET client_id = $2, created_at = $3, awb = $4, batch_id = $5, status = $6, scenario = $7, courier_code = $8, order_code = $9,
    data = $10, version = version + 1
  WHERE order_no = $1 AND version = $11`;

const REMOVE_ORDER = 'DELETE FROM orders WHERE order_no = $1 AND version = $2';

const BY_ORDER_NO = pointRead('SELECT data, version FROM orders WHERE order_no = $1');
const BY_AWB = pointRead('SELECT data, version FROM orders WHERE awb = $1');
// A client's look-ups: another client's row is not sent, so it costs what a missing one does.
const BY_ORDER_NO_OF = pointRead('SELECT data, version FROM orders WHERE order_no = $1 AND client_id = $2');
const BY_AWB_OF = pointRead('SELECT data, version FROM orders WHERE awb = $1 AND client_id = $2');

/** Orders as rows of `orders`: the columns lookups and listings use (ORDER_COLUMNS), and the record as JSON. */
export class PgOrders implements OrderRepository {
  /** A taken order number meets the primary key, a taken batch id NEW_BATCH_INSERT's check, a taken AWB its unique index (update's Conflict). */
  readonly refusesTakenIds = true;

  constructor(
    private readonly db: () => Db,
    /** The client's order of this AWB as the current request's clock read found it (see RequestScope.readsOrder), once; undefined when not read so. */
    private readonly preRead: (awb: string, clientId: string) => PreReadOrder | undefined = () => undefined,
  ) {}

  async get(orderNo: string, clientId?: string): Promise<Stored<Order> | undefined> {
    const { rows } = await this.db().query<{ data: Order; version: number }>(clientId === undefined ? BY_ORDER_NO : BY_ORDER_NO_OF, clientId === undefined ? [orderNo] : [orderNo, clientId]);
    return rows[0] && stored<Order>(rows[0].data, rows[0].version);
  }

  async getMany(orderNos: readonly string[]): Promise<Array<Stored<Order>>> {
    if (orderNos.length === 0) return [];
    const db = this.db();
    // In a unit of work (a removal's slice) the rows are held until it ends: a job of another
    // replica that changes one meanwhile waits for it, rather than making its held-back
    // remove stale and the whole slice a Conflict, tried again and again beside busy jobs.
    const { rows } = await db.query<{ data: Order; version: number }>(
      db.later ? 'SELECT data, version FROM orders WHERE order_no = ANY($1) ORDER BY order_no FOR UPDATE' : 'SELECT data, version FROM orders WHERE order_no = ANY($1)',
      [orderNos],
    );
    return rows.map((row) => stored<Order>(row.data, row.version));
  }

  async byAwb(awb: string, clientId?: string): Promise<Stored<Order> | undefined> {
    const db = this.db();
    // Outside a unit of work only: a unit reads what it changes afresh.
    const read = db.later || clientId === undefined ? undefined : this.preRead(awb, clientId);
    if (read !== undefined) return read ? stored<Order>(read.data, read.version) : undefined;
    const { rows } = await db.query<{ data: Order; version: number }>(clientId === undefined ? BY_AWB : BY_AWB_OF, clientId === undefined ? [awb] : [awb, clientId]);
    return rows[0] && stored<Order>(rows[0].data, rows[0].version);
  }

  async batchExists(batchId: string): Promise<boolean> {
    const { rows } = await this.db().query('SELECT 1 FROM orders WHERE batch_id = $1 LIMIT 1', [batchId]);
    return rows.length > 0;
  }

  async insert(order: Unversioned<Order>): Promise<Stored<Order>> {
    const { data, json } = dataOf(order as Order);
    const db = this.db();
    const text = `INSERT INTO orders (${ORDER_COLUMNS.join(', ')}, version, data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10)`;
    if (db.later) {
      db.later(db.newBatch?.(data.batch_id) ? NEW_BATCH_INSERT : text, [...orderColumns(data), json]);
      return stored<Order>(data, 1);
    }
    try {
      await db.query(text, [...orderColumns(data), json]);
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(`Order ${order.order_no} already exists.`);
      throw error;
    }
    return stored<Order>(data, 1);
  }

  async update(order: Stored<Order>): Promise<Stored<Order>> {
    const { data, json } = dataOf(order as Order);
    const db = this.db();
    const values = [...orderColumns(data), json, order.version];
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
    const db = this.db();
    const values = [order.order_no, order.version];
    if (db.later) {
      // In a unit of work it goes with the unit's next statement or its COMMIT; a changed
      // version (no row removed) then fails that trip, and the unit, with a Conflict.
      db.later(`WITH updated AS (${REMOVE_ORDER} RETURNING 1) ${ONE_ROW_OR_STALE}`, values);
      return;
    }
    const { rowCount } = await db.query(REMOVE_ORDER, values);
    if (rowCount !== 1) throw new Conflict(domainMessages.staleVersion(`Order ${order.order_no}`));
  }

  async list(clientId: string, query: OrderQuery): Promise<Page<Stored<Order>>> {
    const from = positionOf(query.cursor);
    const where = new Where().add((p) => `client_id = ${p(clientId)}`);
    if (query.status !== undefined) where.add((p) => `status = ${p(query.status)}`);
    if (query.scenario !== undefined) where.add((p) => `scenario = ${p(query.scenario)}`);
    if (query.courier_code !== undefined) where.add((p) => `courier_code = ${p(query.courier_code)}`);
    if (query.search !== undefined) where.add((p) => { const s = p(query.search); return `(order_no = ${s} OR awb = ${s} OR order_code = ${s})`; });
    const filters = { sql: where.sql };
    if (from) where.add((p) => `(created_at, order_no) < (${p(from.rank)}, ${p(from.id)})`);
    return listPage<Order>(this.db(), { table: 'orders', filters, page: where, order: ['created_at', 'order_no'], limit: query.limit, total: true, position: (o) => ({ rank: o.created_at, id: o.order_no }) });
  }

  async createdBefore(olderThan: number, limit: number, clientId?: string): Promise<Array<Stored<Order>>> {
    const { rows } = await this.db().query<{ data: Order; version: number }>(
      clientId === undefined
        ? 'SELECT data, version FROM orders WHERE created_at < $1 ORDER BY created_at, order_no LIMIT $2'
        : 'SELECT data, version FROM orders WHERE client_id = $3 AND created_at < $1 ORDER BY created_at, order_no LIMIT $2',
      clientId === undefined ? [finite(olderThan), finite(limit)] : [finite(olderThan), finite(limit), clientId],
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
