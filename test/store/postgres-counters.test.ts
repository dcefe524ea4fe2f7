import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/requests/types.js';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { orderRecord } from './contract.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const open = (url: string, requestLogSize = 10) => PostgresStorage.open({ url, requestLogSize });

/** A direct connection, as another program (or an older replica) uses the database. */
async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

const entry = (id: number, path: string): JournalEntry => ({
  id,
  at: new Date(1_000 * id).toISOString(),
  method: 'GET',
  path,
  query: {},
  operation_id: 'listCouriers',
  headers: {},
  body: null,
  status: 200,
  duration_ms: 1,
  violations: [],
  aborted: false,
});

describe('prepared statements on PostgreSQL', () => {
  it('keep working when a newer replica adds columns to every table (a rolling upgrade)', async () => {
    const url = await server.freshDatabase();
    const storage = await open(url);
    const use = async (n: number) => {
      const order = await storage.orders.insert(orderRecord(`5${n}`, 'a', n));
      await storage.orders.update({ ...order, status: 'cancelled' });
      await storage.transaction(async (tx) => {
        await tx.jobs.schedule({ kind: 'awb', key: `5${n}`, client_id: 'a', due_at: n });
        expect((await tx.orders.get(`5${n}`))?.status).toBe('cancelled');
      });
      await storage.requests.append('a', entry(n, `/n/${n}`));
      await storage.reports.get('a', { events: false });
      await storage.reports.change('a', { counts: { 'create.exercised': 1 }, events: [{ at: n, item: 'create', outcome: 'exercised', note: `request ${n}` }] });
      const claimed = await storage.jobs.claim({ until: n, limit: 10, owner: 'me', leaseMs: 1_000 });
      for (const job of claimed) await storage.jobs.complete(job);
      await storage.sharedClocks.read(['a']);
      return claimed.length;
    };
    // Several times: pg prepares on a connection's first use, PostgreSQL plans generically from the sixth.
    for (let n = 1; n <= 8; n += 1) await use(n);
    const admin = await connect(url);
    for (const table of ['orders', 'jobs', 'clocks', 'counters', 'request_log', 'readiness_reports', 'report_events', 'client_settings', 'deliveries']) {
      await admin.query(`ALTER TABLE ${table} ADD COLUMN added_by_newer text`);
    }
    await admin.end();
    for (let n = 9; n <= 12; n += 1) expect(await use(n)).toBe(1);
    expect((await storage.requests.list('a', {})).map((e) => e.path)).toContain('/n/12');
    const report = await storage.reports.get('a');
    expect(report.counts['create.exercised']).toBe(12);
    expect(report.events.map((e) => e.note)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((n) => `request ${n}`));
    await storage.close();
  });
});
