import { Conflict, domainMessages } from '../../shared/index.js';
import { DEFAULT_ENDPOINT, type Delivery, type DeliveryStatus, type DeliveryQuery, type Page, type Stored, type Unversioned } from '../../records/index.js';
import { positionOf } from '../cursor.js';
import type { DeliveryRepository } from '../port.js';
import { isUniqueViolation, write, type Db } from './db.js';
import { listPage } from './listing.js';
import { dataOf, stored } from './rows.js';
import { finite, Where } from './where.js';

/** Webhook deliveries as rows of `deliveries`: the columns a listing filters and orders on, and the record as JSON. */
export class PgDeliveries implements DeliveryRepository {
  constructor(private readonly db: () => Db) {}

  async get(id: string): Promise<Stored<Delivery> | undefined> {
    const { rows } = await this.db().query<{ data: Delivery; version: number }>('SELECT data, version FROM deliveries WHERE id = $1', [id]);
    return rows[0] && stored<Delivery>(rows[0].data, rows[0].version);
  }

  async getMany(ids: readonly string[]): Promise<Array<Stored<Delivery>>> {
    if (ids.length === 0) return [];
    const { rows } = await this.db().query<{ data: Delivery; version: number }>('SELECT data, version FROM deliveries WHERE id = ANY($1)', [ids]);
    return rows.map((row) => stored<Delivery>(row.data, row.version));
  }

  async ofOrders(clientId: string, orderNos: readonly string[], limit: number): Promise<Array<Stored<Delivery>>> {
    if (orderNos.length === 0) return [];
    const { rows } = await this.db().query<{ data: Delivery; version: number }>('SELECT data, version FROM deliveries WHERE order_no = ANY($1) AND client_id = $2 LIMIT $3', [
      orderNos,
      clientId,
      finite(limit),
    ]);
    return rows.map((row) => stored<Delivery>(row.data, row.version));
  }

  async insert(delivery: Unversioned<Delivery>): Promise<Stored<Delivery>> {
    const { data, json } = dataOf(delivery as Delivery);
    const db = this.db();
    const text = `INSERT INTO deliveries (id, client_id, seq, created_at, status, order_no, event, version, data) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8)`;
    const values = [data.id, data.client_id, data.seq, data.created_at, data.status, data.order_no, data.event, json];
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
    const { data, json } = dataOf(delivery as Delivery);
    const { rowCount } = await this.db().query(
      `UPDATE deliveries SET status = $2, order_no = $3, event = $4, data = $5, version = version + 1 WHERE id = $1 AND version = $6`,
      [data.id, data.status, data.order_no, data.event, json, delivery.version],
    );
    if (rowCount !== 1) throw new Conflict(domainMessages.staleVersion(`Delivery ${delivery.id}`));
    return stored<Delivery>(data, delivery.version + 1);
  }

  async remove(delivery: Stored<Delivery>): Promise<void> {
    await write(this.db(), 'DELETE FROM deliveries WHERE id = $1', [delivery.id]);
  }

  async list(clientId: string, query: DeliveryQuery): Promise<Page<Stored<Delivery>>> {
    const from = positionOf(query.cursor);
    const where = new Where().add((p) => `client_id = ${p(clientId)}`);
    if (query.order_no !== undefined) where.add((p) => `order_no = ${p(query.order_no)}`);
    if (query.status !== undefined) where.add((p) => `status = ${p(query.status)}`);
    if (query.event !== undefined) where.add((p) => `event = ${p(query.event)}`);
    // The default endpoint's deliveries carry no endpoint id (as they did before there were others).
    if (query.endpoint_id !== undefined) where.add((p) => `coalesce(data->>'endpoint_id', ${p(DEFAULT_ENDPOINT)}) = ${p(query.endpoint_id)}`);
    const { dueBy, dueAfter } = query;
    if (dueBy !== undefined) where.add((p) => `(data->>'next_attempt_at')::numeric <= ${p(finite(dueBy))}`);
    if (dueAfter !== undefined) where.add((p) => `(data->>'next_attempt_at')::numeric > ${p(finite(dueAfter))}`);
    const filters = { sql: where.sql };
    if (from) where.add((p) => `(seq, id) < (${p(from.rank)}, ${p(from.id)})`);
    return listPage<Delivery>(this.db(), { table: 'deliveries', filters, page: where, order: ['seq', 'id'], limit: query.limit, total: query.total !== false, position: (d) => ({ rank: d.seq, id: d.id }) });
  }

  async countByStatus(clientId: string, status: DeliveryStatus, upTo = Number.MAX_SAFE_INTEGER): Promise<number> {
    const { rows } = await this.db().query<{ n: string }>('SELECT count(*) AS n FROM (SELECT 1 FROM deliveries WHERE client_id = $1 AND status = $2 LIMIT $3) AS counted', [
      clientId,
      status,
      finite(upTo),
    ]);
    return Number(rows[0]!.n);
  }

  async settledBefore(olderThan: number, limit: number, clientId?: string): Promise<Array<Stored<Delivery>>> {
    const { rows } = await this.db().query<{ data: Delivery; version: number }>(
      clientId === undefined
        ? `SELECT data, version FROM deliveries WHERE created_at < $1 AND status IN ('delivered', 'failed') ORDER BY created_at, id LIMIT $2`
        : `SELECT data, version FROM deliveries WHERE client_id = $3 AND created_at < $1 AND status IN ('delivered', 'failed') ORDER BY created_at, id LIMIT $2`,
      clientId === undefined ? [finite(olderThan), finite(limit)] : [finite(olderThan), finite(limit), clientId],
    );
    return rows.map((row) => stored<Delivery>(row.data, row.version));
  }
}
