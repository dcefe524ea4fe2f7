import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadFixtures } from '../src/fixtures/load.js';
import { IdFactory } from '../src/ids/factory.js';
import type { Order } from '../src/records/order.js';
import type { Db } from '../src/store/postgres/db.js';
import { PgMeta } from '../src/store/postgres/meta.js';
import { ORDER_COLUMNS, orderColumns } from '../src/store/postgres/orders.js';
import { dataOf } from '../src/store/postgres/rows.js';
import { migrate } from '../src/store/postgres/schema.js';

export interface SeedOrdersOptions {
  /** `postgres://...` of the sandbox's database (migrated here if it is new). */
  url: string;
  /**
   * The order every seeded one copies: its client, courier, scenario, status and
   * history. Its journey must be over (an AWB, no step to play), so that the copies
   * need no jobs: e.g. an order of a sandbox on a manual clock advanced past its end.
   */
  template: Order;
  count: number;
  /** The id seed when the database has none yet (else the kept one, as the sandbox uses it). */
  seed?: string;
  /** Rows per INSERT statement. Default 10,000. */
  batchSize?: number;
  /** INSERTs at once, each on its own connection. Default 2. */
  connections?: number;
}

export interface SeededOrders {
  /** The id seed the numbers were made with. */
  seed: string;
  /** The first and the last order seeded (the last is the newest). */
  first: { order_no: string; awb: string };
  last: { order_no: string; awb: string };
}

/** The column types, for `unnest` of one array per column. */
const COLUMN_TYPES: Record<(typeof ORDER_COLUMNS)[number], string> = {
  order_no: 'text',
  client_id: 'text',
  created_at: 'bigint',
  awb: 'text',
  batch_id: 'text',
  status: 'text',
  scenario: 'text',
  courier_code: 'text',
  order_code: 'text',
};

/**
 * Writes `count` orders of one client straight into a sandbox's PostgreSQL database,
 * for benchmarks and tests of a big database (a million orders in about a minute, where
 * the API would take hours). Each is the template with its own order number, batch,
 * AWB and order code, made as the sandbox makes them (the kept seed, counter values
 * reserved in the `counters` table, so orders created later never collide), created
 * 1 ms apart just before the template. Rows are built with the adapter's own
 * `orderColumns` and `dataOf`, in batches of multi-row INSERTs.
 *
 * @example await seedOrders({ url, template, count: 1_000_000 })
 */
export async function seedOrders({ url, template, count, seed, batchSize = 10_000, connections = 2 }: SeedOrdersOptions): Promise<SeededOrders> {
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`seedOrders writes at least one order; count was ${count}.`);
  if (template.awb === null || template.next_step !== null) {
    throw new Error(`seedOrders copies an order whose journey is over (an AWB and no step to play); order ${template.order_no} has ${template.awb === null ? 'no AWB' : `step ${template.next_step} to play`}.`);
  }
  const courier = loadFixtures().couriers.get(template.courier_code);
  if (!courier) throw new Error(`The template's courier ${template.courier_code} is not in the fixtures.`);
  const pool = new pg.Pool({ connectionString: url, max: connections });
  try {
    await migrate(pool);
    const db: Db = { query: (text, values) => pool.query(text, values) as never, scheduled: () => undefined };
    const meta = new PgMeta(() => db);
    let kept = await meta.get('seed');
    if (kept === undefined) {
      kept = seed ?? randomBytes(8).toString('hex');
      await meta.set('seed', kept);
    }
    // The copies have no due work: a start must not look for due times in them (an upgrade step of old data files).
    if ((await meta.get('jobs_migrated')) === undefined) await meta.set('jobs_migrated', Date.now());
    const ids = new IdFactory(kept);
    const reserve = async (name: string): Promise<number> => {
      const { rows } = await pool.query<{ value: string }>(
        'INSERT INTO counters (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value RETURNING value',
        [name, count],
      );
      return Number(rows[0]!.value) - count; // the counter's value before: ours are the next `count`
    };
    const [orderFrom, batchFrom, awbFrom] = [await reserve('order'), await reserve('batch'), await reserve(`awb:${courier.code}`)];
    const { data, json } = dataOf(template);
    const copy = (i: number): Omit<Order, 'version'> => ({
      ...data,
      order_no: ids.orderNumberOf(orderFrom + i + 1, data.client_id),
      batch_id: ids.batchIdOf(batchFrom + i + 1, data.client_id),
      awb: ids.awbOf(courier, awbFrom + i + 1, data.client_id),
      created_at: data.created_at - (count - i),
      item: { ...data.item, order_code: `SEED-${i + 1}` },
    });
    // The data column is the template's with the fields that differ, which are columns too.
    const columns = ORDER_COLUMNS.join(', ');
    const arrays = ORDER_COLUMNS.map((name, i) => `$${i + 2}::${COLUMN_TYPES[name]}[]`).join(', ');
    const insert = `INSERT INTO orders (${columns}, version, data)
      SELECT ${columns}, 1, $1::jsonb || jsonb_build_object('order_no', order_no, 'batch_id', batch_id, 'awb', awb, 'created_at', created_at,
        'item', ($1::jsonb -> 'item') || jsonb_build_object('order_code', order_code))
      FROM unnest(${arrays}) AS c(${columns})`;
    // Batches on `connections` connections at once: the database builds rows and indexes on as many cores.
    let next = 0;
    const worker = async (): Promise<void> => {
      const client = await pool.connect();
      try {
        await client.query('SET synchronous_commit = off');
        for (let from = next; from < count; from = next) {
          next += batchSize;
          const values: unknown[][] = ORDER_COLUMNS.map(() => []);
          for (let i = from; i < Math.min(count, from + batchSize); i += 1) orderColumns(copy(i)).forEach((value, column) => values[column]!.push(value));
          await client.query(insert, [json, ...values]);
        }
      } finally {
        client.release();
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
    // What autovacuum would do a little later (planner statistics, the visibility map and
    // hint bits of the new rows), done now: a database that has run for weeks is not in the
    // middle of vacuuming a million rows it was just given.
    await pool.query('VACUUM (ANALYZE) orders');
    const first = copy(0);
    const last = copy(count - 1);
    return { seed: kept, first: { order_no: first.order_no, awb: first.awb! }, last: { order_no: last.order_no, awb: last.awb! } };
  } finally {
    await pool.end();
  }
}
