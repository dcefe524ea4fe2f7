import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { Unavailable } from '../../src/shared/errors.js';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION } from '../../src/store/postgres/schema.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { orderRecord, storageContract } from './contract.js';

let server: TestPostgres;
let current = '';
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const fresh = async () => {
  current = await server.freshDatabase();
  return PostgresStorage.open({ url: current, requestLogSize: 10 });
};

// 5,000 records of another client in the listing-cost test: each insert is a round trip to the server.
storageContract('PostgreSQL', fresh, () => PostgresStorage.open({ url: current, requestLogSize: 10 }), undefined, 5_000);

describe('PostgreSQL adapter', () => {
  it('refuses to start on a database migrated by a newer sandbox, and says so', async () => {
    const storage = await fresh();
    await storage.close();
    const client = new pg.Client({ connectionString: current });
    await client.connect();
    await client.query('INSERT INTO sandbox_schema (version) VALUES ($1)', [SCHEMA_VERSION + 1]);
    await client.end();
    await expect(PostgresStorage.open({ url: current, requestLogSize: 10 })).rejects.toThrow(/schema version .* newer than this sandbox/);
  });

  it('migrates once when several replicas start together', async () => {
    current = await server.freshDatabase();
    const replicas = await Promise.all([1, 2, 3].map(() => PostgresStorage.open({ url: current, requestLogSize: 10 })));
    await replicas[0]!.orders.insert(orderRecord('71', 'a', 1));
    expect((await replicas[2]!.orders.get('71'))?.order_no).toBe('71');
    for (const replica of replicas) await replica.close();
  });

  it('says which migrations a start ran; one waiting for another replica’s migration says so and ends at a stop signal', async () => {
    current = await server.freshDatabase();
    const migrated: Array<[number, number]> = [];
    const storage = await PostgresStorage.open({ url: current, requestLogSize: 10, onMigrated: (from, to) => migrated.push([from, to]) });
    await storage.close();
    expect(migrated).toEqual([[0, SCHEMA_VERSION]]);
    // Another replica holds the schema lock, as one running a long migration does.
    const holder = new pg.Client({ connectionString: current });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const waits: number[] = [];
    const stop = new AbortController();
    const opening = PostgresStorage.open({ url: current, requestLogSize: 10, signal: stop.signal, onMigrationWait: (ms) => waits.push(ms), onMigrated: (from, to) => migrated.push([from, to]) });
    const outcome = opening.then(
      () => 'opened',
      (error: unknown) => error,
    );
    await vi.waitFor(() => expect(waits.length).toBe(1), { timeout: 5_000 });
    expect(waits[0]).toBeGreaterThanOrEqual(2_000);
    const stoppedAt = Date.now();
    stop.abort(new Error('stop signal'));
    expect(await outcome).toEqual(new Error('stop signal'));
    expect(Date.now() - stoppedAt).toBeLessThan(1_000);
    await holder.end();
    // Already at this version: a later start migrates nothing, and says nothing of it.
    await (await PostgresStorage.open({ url: current, requestLogSize: 10, onMigrated: (from, to) => migrated.push([from, to]) })).close();
    expect(migrated).toEqual([[0, SCHEMA_VERSION]]);
  });

  it('builds an index without holding writes, and builds again one that a start cut short left invalid', async () => {
    const storage = await fresh();
    await storage.close();
    const version = MIGRATIONS.findIndex((m) => typeof m !== 'string') + 1;
    const client = new pg.Client({ connectionString: current });
    await client.connect();
    const valid = async () => (await client.query<{ valid: boolean }>("SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass('deliveries_by_status')")).rows[0]?.valid;
    expect(await valid()).toBe(true);
    // As a CREATE INDEX CONCURRENTLY interrupted by a crash leaves it: there, but invalid, and the version not recorded.
    await client.query("UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass('deliveries_by_status')");
    await client.query('DELETE FROM sandbox_schema WHERE version >= $1', [version]);
    // A write held open meanwhile (a replica of the version before) does not keep the next start from migrating.
    await client.query('BEGIN');
    await client.query("INSERT INTO deliveries (id, client_id, seq, created_at, status, order_no, event, version, data) VALUES ('msg_x', 'a', 1, 1, 'paused', NULL, 'ping', 1, '{}')");
    const reopened = PostgresStorage.open({ url: current, requestLogSize: 10 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await client.query('COMMIT');
    await (await reopened).close();
    expect(await valid()).toBe(true);
    expect((await client.query('SELECT max(version) AS v FROM sandbox_schema')).rows[0].v).toBe(SCHEMA_VERSION);
    await client.end();
  });

  it('finds and claims due jobs of a client whose clock runs ahead through the indexes, never a scan of the jobs table', async () => {
    current = await server.freshDatabase();
    // With sequential scans ruled out where an index can do, a query that still scans the table is one that cannot use one.
    const storage = await PostgresStorage.open({ url: `${current}?options=${encodeURIComponent('-c enable_seqscan=off')}`, requestLogSize: 10 });
    const hour = 3_600_000;
    await storage.transaction(async (tx) => {
      for (let i = 0; i < 200; i += 1) {
        await tx.jobs.schedule({ kind: 'awb', key: `a${i}`, client_id: 'ahead', due_at: 10_000 + hour + i });
        await tx.jobs.schedule({ kind: 'awb', key: `b${i}`, client_id: 'plain', due_at: 10_000 + i });
      }
    });
    const client = new pg.Client({ connectionString: current });
    await client.connect();
    const seqScans = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_200)); // stats are flushed at least every second
      await client.query('SELECT pg_stat_clear_snapshot()');
      return Number((await client.query<{ n: string }>("SELECT seq_scan AS n FROM pg_stat_user_tables WHERE relname = 'jobs'")).rows[0]!.n);
    };
    const before = await seqScans();
    // 'ahead' runs an hour ahead of the sandbox's clock: its job due at 10,000 + 1 h of its
    // own time is due at 10,000 of the sandbox's, as is 'plain's due at 10,000.
    const ahead = new Map([['ahead', hour]]);
    expect(await storage.jobs.nextDue({ ahead })).toBe(10_000);
    expect(await storage.jobs.nextDue({ ahead: new Map([['ahead', hour + 500]]), kinds: ['awb'] })).toBe(10_000 - 500);
    const claimed = await storage.jobs.claim({ until: 10_050, limit: 1_000, owner: 'w', leaseMs: 60_000, kinds: ['awb'], perClient: 500, ahead });
    const keys = (client: string) => claimed.filter((job) => job.client_id === client).map((job) => job.key).sort((x, y) => Number(x.slice(1)) - Number(y.slice(1)));
    expect(keys('ahead')).toEqual(Array.from({ length: 51 }, (_, i) => `a${i}`));
    expect(keys('plain')).toEqual(Array.from({ length: 51 }, (_, i) => `b${i}`));
    expect(await storage.jobs.nextDue({ ahead })).toBe(10_051);
    expect(await seqScans()).toBe(before);
    await client.end();
    await storage.close();
  });

  it("claims another client's due job beside one client's backlog, reading about as many rows as it takes, not the backlog", async () => {
    const storage = await fresh();
    const client = new pg.Client({ connectionString: current });
    await client.connect();
    const hour = 3_600_000;
    // A backlog of client A, all due at one time of A's clock, which runs an hour ahead of
    // the sandbox's: 20,000 AWB jobs and 5,000 webhook attempts (one insert each). One job
    // of client B, due after all of them.
    await client.query(`INSERT INTO jobs (kind, key, client_id, due_at, version) SELECT 'awb', 'a' || i, 'a', ${10_000 + hour}, 1 FROM generate_series(1, 20000) AS i ORDER BY i`);
    await client.query(`INSERT INTO jobs (kind, key, client_id, due_at, version) SELECT 'webhook', 'd' || i, 'a', ${10_000 + hour}, 1 FROM generate_series(1, 5000) AS i ORDER BY i`);
    await storage.jobs.schedule({ kind: 'awb', key: 'b1', client_id: 'b', due_at: 40_000 });
    await client.query('ANALYZE jobs');
    const rowsRead = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_200)); // stats are flushed at least every second
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ n: string }>("SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) AS n FROM pg_stat_user_tables WHERE relname = 'jobs'");
      return Number(rows[0]!.n);
    };
    const ahead = new Map([['a', hour]]);
    let before = await rowsRead();
    const claimed = await storage.jobs.claim({ until: 50_000, limit: 32, owner: 'w', leaseMs: 60_000, kinds: ['awb', 'step', 'retention'], perClient: 8, ahead });
    let read = (await rowsRead()) - before;
    // In rounds: A's first, B's, then A's next seven (at one due time, in the order scheduled).
    expect(claimed.map((job) => job.key)).toEqual(['a1', 'b1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8']);
    expect(read).toBeLessThan(500);
    // A's attempts while A's share of the pool is in use: none read, let alone claimed.
    before = await rowsRead();
    expect(await storage.jobs.claim({ until: 50_000, limit: 32, owner: 'w', leaseMs: 60_000, kinds: ['webhook'], perClient: 8, ahead, skipClients: new Set(['a']) })).toEqual([]);
    read = (await rowsRead()) - before;
    expect(read).toBeLessThan(500);
    await client.end();
    await storage.close();
  });

  it('holds locks only on the jobs a claim takes: another replica claims beside a claim whose transaction is still open', async () => {
    current = await server.freshDatabase();
    const [a, b] = await Promise.all([1, 2].map(() => PostgresStorage.open({ url: current, requestLogSize: 10 })));
    await a!.transaction(async (tx) => {
      for (let c = 0; c < 20; c += 1) for (let i = 0; i < 8; i += 1) await tx.jobs.schedule({ kind: 'awb', key: `c${c}-${i}`, client_id: `c${String(c).padStart(2, '0')}`, due_at: 1_000 + c * 10 + i });
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let took!: (keys: string[]) => void;
    const taken = new Promise<string[]>((resolve) => (took = resolve));
    // Replica A's claim takes one job and keeps its transaction (and so its row locks) open.
    const unit = a!.transaction(async (tx) => {
      took((await tx.jobs.claim({ until: 5_000, limit: 1, owner: 'a', leaseMs: 60_000, kinds: ['awb', 'step', 'retention'], perClient: 8 })).map((job) => job.key));
      await held;
    });
    expect(await taken).toEqual(['c0-0']);
    // Meanwhile replica B advances client c05: every one of its due jobs is there to take.
    const claimed = await b!.jobs.claim({ until: 5_000, limit: 32, owner: 'b', leaseMs: 60_000, kinds: ['awb', 'step', 'retention'], perClient: 8, clientId: 'c05' });
    expect(claimed.map((job) => job.key)).toEqual(Array.from({ length: 8 }, (_, i) => `c5-${i}`));
    release();
    await unit;
    await a!.close();
    await b!.close();
  });

  it('takes counter values as a sequence does: a unit holding its transaction open does not hold back the next number', async () => {
    const storage = await fresh();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let took!: (value: number) => void;
    const taken = new Promise<number>((resolve) => (took = resolve));
    const unit = storage.transaction(async (tx) => {
      took(await tx.counters.next('order'));
      await held;
      throw new Error('the unit fails');
    });
    expect(await taken).toBe(1);
    // With the counter row locked until the unit ends, this would wait for it.
    const next = await Promise.race([storage.counters.next('order'), new Promise((resolve) => setTimeout(() => resolve('waited for the unit'), 2_000))]);
    expect(next).toBe(2);
    release();
    await expect(unit).rejects.toThrow('the unit fails');
    expect(await storage.counters.next('order')).toBe(3); // the failed unit's 1 is skipped, never given again
    await storage.close();
  });

  it('gives each due job to exactly one of two replicas claiming at once', async () => {
    const a = await fresh();
    const b = await PostgresStorage.open({ url: current, requestLogSize: 10 });
    await a.transaction(async (tx) => {
      for (let i = 0; i < 200; i += 1) await tx.jobs.schedule({ kind: 'awb', key: String(i), client_id: i % 2 ? 'x' : 'y', due_at: i });
    });
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).jobs.claim({ until: 1_000, limit: 30, owner: `w${i}`, leaseMs: 60_000 })),
    );
    const keys = claims.flat().map((job) => job.key);
    expect(keys.length).toBe(200);
    expect(new Set(keys).size).toBe(200);
    await a.close();
    await b.close();
  });

  it('lets another replica take over a job whose lease ran out (its replica died)', async () => {
    const a = await fresh();
    await a.jobs.schedule({ kind: 'step', key: '81', client_id: 'x', due_at: 5 });
    // A lease long enough that the claim beside it comes while it holds, however busy the machine.
    const claimedAt = performance.now();
    const [held] = await a.jobs.claim({ until: 10, limit: 5, owner: 'dead', leaseMs: 2_000 });
    expect(held?.key).toBe('81');
    expect(await a.jobs.claim({ until: 10, limit: 5, owner: 'alive', leaseMs: 60_000 })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 2_100 - (performance.now() - claimedAt))));
    const [taken] = await a.jobs.claim({ until: 10, limit: 5, owner: 'alive', leaseMs: 60_000 });
    expect(taken).toMatchObject({ key: '81', claimed_by: 'alive' });
    await a.close();
  });

  it('tells a replica of a job another replica scheduled, through NOTIFY', async () => {
    const a = await fresh();
    const b = await PostgresStorage.open({ url: current, requestLogSize: 10 });
    const heard = new Promise<[number, string]>((resolve) => b.onJobScheduled((dueAt, clientId) => resolve([dueAt, clientId])));
    await a.jobs.schedule({ kind: 'awb', key: '91', client_id: 'x', due_at: 12_345 });
    expect(await heard).toEqual([12_345, 'x']);
    await a.close();
    await b.close();
  });

  it('stores text with a NUL character (which PostgreSQL cannot hold) as U+FFFD, and a filter with one matches nothing', async () => {
    const storage = await fresh();
    const order = orderRecord('75', 'a', 1);
    await storage.orders.insert({ ...order, item: { ...order.item, receiver_name: 'Bu\u0000di' } });
    expect((await storage.orders.get('75'))?.item.receiver_name).toBe('Bu\uFFFDdi');
    expect((await storage.orders.list('a', { limit: 5, search: '\u0000' })).items).toEqual([]);
    await storage.close();
  });

  it('numbers a client’s journal entries from the database, so two replicas never repeat or reorder them', async () => {
    const a = await fresh();
    const b = await PostgresStorage.open({ url: current, requestLogSize: 3 });
    const entry = (id: number) => ({ id, at: new Date(1_000 * id).toISOString(), method: 'GET', path: '/v1/couriers', query: {}, operation_id: 'listCouriers', headers: {}, body: null, status: 200, duration_ms: 1, violations: [], aborted: false });
    // Each replica counts its own arrivals from 1: the ids they were given collide.
    for (const id of [1, 2]) {
      await a.requests.append('x', entry(id));
      await b.requests.append('x', entry(id));
    }
    const listed = await b.requests.list('x', {});
    expect(listed.map((e) => e.id)).toEqual([2, 3, 4]);
    await a.close();
    await b.close();
  });

  it("judges against a client's marks as they are, whichever replica changed them, while reading them whole only when they changed", async () => {
    const a = await fresh();
    const b = await PostgresStorage.open({ url: current, requestLogSize: 10 });
    const mark = (wall: number) => ({ at: wall, wall, detail: {} });
    const marksOf = async (store: PostgresStorage) => Object.keys((await store.reports.get('acme', { counts: false, events: false })).marks).sort();

    await a.reports.change('acme', { marks: { '404:A': mark(1) } });
    expect(await marksOf(a)).toEqual(['404:A']);
    // This replica's own change is followed without reading the marks again.
    await a.reports.change('acme', { marks: { '404:B': mark(2), '404:A': null } });
    expect(await marksOf(a)).toEqual(['404:B']);
    // Another replica's change is seen at the next read.
    await b.reports.change('acme', { marks: { '404:C': mark(3) } });
    expect(await marksOf(a)).toEqual(['404:B', '404:C']);
    // A change of this replica's made after another's (the version moved twice) is not taken for the only one.
    await b.reports.change('acme', { marks: { '404:D': mark(4) } });
    await a.reports.change('acme', { marks: { '404:E': mark(5) } });
    expect(await marksOf(a)).toEqual(['404:B', '404:C', '404:D', '404:E']);
    // A report removed and made again through the other replica, back to the version a kept (1, then 2): not taken for the one kept.
    await b.reports.clear('acme');
    await b.reports.change('acme', { marks: { '404:F': mark(6) } });
    expect(await marksOf(a)).toEqual(['404:F']);
    await b.reports.clear('acme');
    await b.reports.change('acme', { marks: { '404:G': mark(7) } });
    await a.reports.change('acme', { marks: { '404:H': mark(8) } });
    expect(await marksOf(a)).toEqual(['404:G', '404:H']);
    // A new run started elsewhere clears them.
    await b.reports.start('acme', { name: 'second', started_at: 9, started_wall: 9 });
    expect(await marksOf(a)).toEqual([]);
    expect((await a.reports.get('acme', { counts: false, events: false })).run?.name).toBe('second');

    await a.close();
    await b.close();
  });

  it("reads a client's many marks whole once, not at every batch of judgments, while only this replica changes them", async () => {
    const a = await fresh();
    const b = await PostgresStorage.open({ url: current, requestLogSize: 10 });
    const marks = Object.fromEntries(Array.from({ length: 400 }, (_, n) => [`404:AWB${n}`, { at: n, wall: n, detail: { awb: `AWB${n}` } }]));
    await a.reports.change('acme', { marks });
    const read = () => a.reports.get('acme', { counts: false, events: false });
    const first = await read();
    for (let n = 0; n < 20; n += 1) {
      // The report kept at hand, not one read afresh: the same object, with this replica's changes in it.
      const view = await read();
      expect(view).toBe(first);
      expect(Object.keys(view.marks)).toHaveLength(400 + n);
      await a.reports.change('acme', { marks: { [`404:NEW${n}`]: { at: n, wall: n, detail: {} } } });
    }
    await b.reports.change('acme', { marks: { '404:OTHER': { at: 1, wall: 1, detail: {} } } });
    const after = await read();
    expect(after).not.toBe(first);
    expect(Object.keys(after.marks)).toHaveLength(421);
    await a.close();
    await b.close();
  });

  it("reads the marks whole again after 5 s however the row's version stands: an older replica's trim does not move it", async () => {
    const a = await fresh();
    const client = new pg.Client({ connectionString: current });
    await client.connect();
    const mark = { at: 1, wall: 1, detail: {} };
    await a.reports.change('acme', { marks: { '404:OLD': mark, '404:NEW': mark } });
    const read = async () => Object.keys((await a.reports.get('acme', { counts: false, events: false })).marks).sort();
    expect(await read()).toEqual(['404:NEW', '404:OLD']);
    // The trim of a replica before schema version 10, as it was: the marks changed, the version not.
    await client.query(`UPDATE readiness_reports SET state = jsonb_set(state, '{marks}', (state->'marks') - '404:OLD') WHERE client_id = 'acme'`);
    expect(await read()).toEqual(['404:NEW', '404:OLD']);
    const now = Date.now();
    const later = vi.spyOn(Date, 'now').mockReturnValue(now + 5_001);
    try {
      expect(await read()).toEqual(['404:NEW']);
    } finally {
      later.mockRestore();
    }
    await client.end();
    await a.close();
  });

  // Last: it stops the server.
  it('answers Unavailable (a 503 with Retry-After), not a crash, while the database is down, and shows it in health', async () => {
    const storage = await fresh();
    await storage.orders.insert(orderRecord('61', 'a', 1));
    await server.stop();
    await expect(storage.orders.get('61')).rejects.toBeInstanceOf(Unavailable);
    await expect(storage.transaction((tx) => tx.orders.insert(orderRecord('62', 'a', 2)))).rejects.toBeInstanceOf(Unavailable);
    expect(storage.health()).toMatchObject({ writable: false, error: expect.any(String) });
    await storage.close();
  });
});
