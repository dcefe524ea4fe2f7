import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Conflict, Unavailable } from '../../src/shared/errors.js';
import type { JournalEntry } from '../../src/records/journal-entry.js';
import { COUNTER_BLOCK, RANK_LEAD_MS } from '../../src/store/postgres/counters.js';
import { JOURNAL_QUEUE } from '../../src/store/postgres/requests.js';
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

/** How the sandbox before counters in blocks took a number: one at a time from the row. */
const OLD_NEXT = 'INSERT INTO counters (name, value) VALUES ($1, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value';

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

describe('counters on PostgreSQL', () => {
  it('never hands out a number twice while replicas of this version (in blocks) and of the version before (one at a time) share the row', async () => {
    const url = await server.freshDatabase();
    const a = await open(url);
    const b = await open(url);
    const old = await connect(url);
    const taken: number[] = [];
    const oldNext = async () => Number((await old.query<{ value: string }>(OLD_NEXT, ['order'])).rows[0]!.value);
    for (let round = 0; round < 3 * COUNTER_BLOCK; round += 1) {
      taken.push(...(await Promise.all([a.counters.next('order'), b.counters.next('order'), oldNext(), a.counters.next('order')])));
    }
    expect(taken).toHaveLength(12 * COUNTER_BLOCK);
    expect(new Set(taken).size).toBe(taken.length);
    // Each replica's own numbers still come in order, as a sequence's do.
    const { rows } = await old.query<{ value: string }>("SELECT value FROM counters WHERE name = 'order'");
    expect(Math.max(...taken)).toBeLessThanOrEqual(Number(rows[0]!.value));
    await old.end();
    await a.close();
    await b.close();
  });

  it('numbers on after a restart (one replica) where it stopped: the rest of a block goes back at close, unless someone took from the row since', async () => {
    const url = await server.freshDatabase();
    const first = await open(url);
    expect([await first.counters.next('order'), await first.counters.next('order'), await first.counters.next('batch')]).toEqual([1, 2, 1]);
    await first.close();
    const second = await open(url);
    expect([await second.counters.next('order'), await second.counters.next('batch')]).toEqual([3, 2]);
    // An older replica takes a number meanwhile: the block's rest cannot go back (it would be given again).
    const old = await connect(url);
    const oldTook = Number((await old.query<{ value: string }>(OLD_NEXT, ['order'])).rows[0]!.value);
    expect(oldTook).toBe(COUNTER_BLOCK + 3);
    await second.close();
    const third = await open(url);
    expect(await third.counters.next('order')).toBe(COUNTER_BLOCK + 4);
    await third.close();
    await old.end();
  });

  it('ranks deliveries on every replica by the database’s clock, whatever its host’s clock says, and keeps a replica of the version before near that order; a client’s delivery numbers in blocks, never the same twice', async () => {
    const url = await server.freshDatabase();
    // Between two ranks on two replicas the clock moves on by more than each replica's reading of it may be off (half its round trip).
    const pause = () => new Promise((resolve) => setTimeout(resolve, 100));
    const a = await open(url);
    await a.counters.syncRanks();
    const ranks = [await a.counters.rank('delivery')];
    // The host's wall clock steps back a minute: a replica started now (b), from its first rank on, and one reading the clock again (a) rank by the database's.
    const hostNow = Date.now.bind(Date);
    const stepped = vi.spyOn(Date, 'now').mockImplementation(() => hostNow() - 60_000);
    let b!: PostgresStorage;
    let old!: pg.Client;
    try {
      b = await open(url);
      ranks.push(await b.counters.rank('delivery'));
      await a.counters.syncRanks();
      for (const replica of [b, a, b]) {
        await pause();
        ranks.push(await replica.counters.rank('delivery'));
      }
      // Many in one millisecond on one replica still rise one by one.
      await pause();
      const ranked = await Promise.all(Array.from({ length: 3_000 }, () => a.counters.rank('delivery')));
      expect(new Set(ranked).size).toBe(ranked.length);
      ranks.push(...ranked);
      // A replica of the version before takes the delivery sequence from its row, one at a time: above every
      // rank given before, even by a replica that never read the clock again (killed, it could not), ...
      await b.counters.syncRanks();
      old = await connect(url);
      old.on('error', () => undefined);
      const oldTook = Number((await old.query<{ value: string }>(OLD_NEXT, ['delivery'])).rows[0]!.value);
      ranks.push(oldTook);
      const outOfOrder = ranks.flatMap((rank, i) => (i > 0 && rank <= ranks[i - 1]! ? [`${i}: ${ranks[i - 1]} then ${rank}`] : []));
      expect(outOfOrder).toEqual([]);
      // ... and ranked up to RANK_LEAD_MS newer than it is: a rank given after it may come before it, by no more than that.
      await pause();
      const after = await a.counters.rank('delivery');
      expect(oldTook - after).toBeLessThanOrEqual(RANK_LEAD_MS * 1_024);
    } finally {
      stepped.mockRestore();
      await old?.end();
    }
    const own = [await a.counters.next('delivery:x'), await b.counters.next('delivery:x'), await a.counters.next('delivery:x')];
    expect(own).toEqual([1, COUNTER_BLOCK + 1, 2]);
    await a.close();
    await b.close();
  });
});

describe('the request journal on PostgreSQL', () => {
  it('keeps appends made at once in the order they were made, bounded per client, each readable once it resolved', async () => {
    const url = await server.freshDatabase();
    const storage = await open(url, 10);
    const appends: Array<Promise<void>> = [];
    for (let i = 1; i <= 60; i += 1) appends.push(storage.requests.append(i % 3 === 0 ? 'y' : 'x', entry(i, `/x/${i}`)));
    await Promise.all(appends);
    const x = await storage.requests.list('x', {});
    const y = await storage.requests.list('y', {});
    const made = (client: 'x' | 'y') => Array.from({ length: 60 }, (_, n) => n + 1).filter((i) => (i % 3 === 0) === (client === 'y'));
    expect(x.map((e) => e.path)).toEqual(made('x').slice(-10).map((i) => `/x/${i}`));
    expect(x.map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, n) => 31 + n)); // 40 entries of x, numbered 1..40
    expect(y.map((e) => e.path)).toEqual(made('y').slice(-10).map((i) => `/x/${i}`));
    expect(y.map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, n) => 11 + n));
    // Read your writes: one more, alone, is there as soon as its append resolved.
    await storage.requests.append('x', entry(61, '/x/61'));
    expect((await storage.requests.list('x', {})).at(-1)).toMatchObject({ id: 41, path: '/x/61' });
    await storage.close();
  });

  it('numbers two replicas’ appends made at once without a repeat, each replica’s in its own order', async () => {
    const url = await server.freshDatabase();
    const a = await open(url, 100);
    const b = await open(url, 100);
    await Promise.all(Array.from({ length: 40 }, (_, i) => [a.requests.append('x', entry(i + 1, `/a/${i}`)), b.requests.append('x', entry(i + 1, `/b/${i}`))]).flat());
    const listed = await a.requests.list('x', {});
    expect(listed.map((e) => e.id)).toEqual(Array.from({ length: 80 }, (_, n) => n + 1));
    for (const replica of ['a', 'b']) {
      expect(listed.filter((e) => e.path.startsWith(`/${replica}/`)).map((e) => e.path)).toEqual(Array.from({ length: 40 }, (_, i) => `/${replica}/${i}`));
    }
    await a.close();
    await b.close();
  });

  it(`holds at most ${JOURNAL_QUEUE.toLocaleString('en')} appends waiting for the database: one more fails (and is logged), those before are kept`, async () => {
    const url = await server.freshDatabase();
    const storage = await open(url, 5);
    // Held for their batch or being written, up to the bound; the last is one too many.
    const made = JOURNAL_QUEUE + 1;
    const appends = Array.from({ length: made }, (_, i) => storage.requests.append('x', entry(i + 1, `/x/${i + 1}`)));
    const outcomes = await Promise.allSettled(appends);
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
    expect(outcomes.at(-1)!.status).toBe('rejected');
    const kept = await storage.requests.list('x', {});
    expect(kept.map((e) => e.path)).toEqual([4, 3, 2, 1, 0].map((back) => `/x/${JOURNAL_QUEUE - back}`));
    expect(kept.map((e) => e.id)).toEqual([4, 3, 2, 1, 0].map((back) => JOURNAL_QUEUE - back));
    await storage.close();
  }, 60_000);
});

describe('the request journal on PostgreSQL, one partner against another', () => {
  it('keeps another client’s entries when one client floods the queue past its bound', async () => {
    const url = await server.freshDatabase();
    const storage = await open(url, 5);
    const flood = Promise.allSettled(Array.from({ length: JOURNAL_QUEUE + 50 }, (_, i) => storage.requests.append('flooder', entry(i + 1, `/f/${i + 1}`))));
    const mine = [1, 2, 3].map((i) => storage.requests.append('quiet', entry(i, `/q/${i}`)));
    expect((await Promise.allSettled(mine)).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect((await flood).filter((o) => o.status === 'rejected').length).toBeGreaterThan(0);
    expect((await storage.requests.list('quiet', {})).map((e) => e.path)).toEqual(['/q/1', '/q/2', '/q/3']);
    await storage.close();
  }, 60_000);

  it('writes the rest of a batch when the database refuses one entry, and stores half a surrogate pair as U+FFFD', async () => {
    const url = await server.freshDatabase();
    const storage = await open(url, 10);
    const outcomes = await Promise.allSettled([
      storage.requests.append('a', entry(1, '/a/1')),
      storage.requests.append('b', { ...entry(2, '/b/lone-\udc00'), body: { sender_name: 'x\udc00y' } }),
      storage.requests.append('b', { ...entry(3, '/b/refused'), status: 10 ** 12 }), // no integer column holds it
      storage.requests.append('a', entry(4, '/a/4')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((await storage.requests.list('a', {})).map((e) => e.path)).toEqual(['/a/1', '/a/4']);
    const [lone] = await storage.requests.list('b', {});
    expect(lone).toMatchObject({ path: '/b/lone-\uFFFD', body: { sender_name: 'x\uFFFDy' } });
    await storage.close();
  });

  it('writes every append still waiting before it closes', async () => {
    const url = await server.freshDatabase();
    const storage = await open(url, 1_000);
    const appends = Array.from({ length: 600 }, (_, i) => storage.requests.append('a', entry(i + 1, `/a/${i + 1}`)));
    await storage.close();
    expect((await Promise.allSettled(appends)).every((o) => o.status === 'fulfilled')).toBe(true);
    const reopened = await open(url, 1_000);
    expect(await reopened.requests.list('a', {})).toHaveLength(600);
    await reopened.close();
  });
});

describe('writes held back in a unit of work (sent pipelined with its next statement)', () => {
  it('keep whatever a partner put in them, exactly, and are seen by the unit\'s next read', async () => {
    const url = await server.freshDatabase();
    const storage = await open(url);
    const hostile = ["O'Brien", "'); DROP TABLE orders; --", 'back\\slash \\\' quote', '$1 and $2', 'é ✓ 𝄞', 'x'.repeat(50_000), '', '{"a":[1,"\'"]}'];
    const seen = await storage.transaction(async (tx) => {
      for (const [i, text] of hostile.entries()) await tx.orders.insert(orderRecord(`${60 + i}`, 'a', i, { item: { ...orderRecord('0', 'a', 0).item, receiver_name: text } }));
      return (await tx.orders.get('67'))?.item.receiver_name;
    });
    expect(seen).toBe(hostile[7]);
    for (const [i, text] of hostile.entries()) expect((await storage.orders.get(`${60 + i}`))?.item.receiver_name).toBe(text);
    await storage.close();
  });

  it('fail the unit with a Conflict when one meets a taken key, keep none of its writes, and leave the connection usable', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10, poolSize: 1 });
    await storage.orders.insert(orderRecord('71', 'a', 1));
    let attempts = 0;
    await expect(
      storage.transaction(async (tx) => {
        attempts += 1;
        await tx.orders.insert(orderRecord('70', 'a', 1));
        await tx.orders.insert(orderRecord('71', 'a', 2));
        await tx.orders.insert(orderRecord('72', 'a', 3));
        return tx.orders.get('72');
      }),
    ).rejects.toBeInstanceOf(Conflict);
    // A Conflict is tried again with fresh reads, up to four times in all.
    expect(attempts).toBe(4);
    expect(await storage.orders.get('70')).toBeUndefined();
    expect(await storage.orders.get('72')).toBeUndefined();
    // The only connection rolled back and serves the next unit.
    await storage.transaction(async (tx) => void (await tx.orders.insert(orderRecord('73', 'a', 4))));
    expect((await storage.orders.get('73'))?.order_no).toBe('73');
    await storage.close();
  });
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
    for (const table of ['orders', 'jobs', 'clocks', 'counters', 'request_log', 'readiness_reports', 'report_events', 'report_counts', 'client_settings', 'deliveries']) {
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

describe('readiness reports on PostgreSQL, across replicas and versions', () => {
  it('read the counts a version before kept in the report row together with the new rows, and two replicas change marks and counts at once without a refusal', async () => {
    const url = await server.freshDatabase();
    const a = await open(url);
    const b = await open(url);
    // As a version before left it: the counts in the row's state.
    const admin = await connect(url);
    const before = { client_id: 'x', run: null, counts: { 'op.create-order:exercised': 5 }, marks: { kept: { at: 1, wall: 1, detail: {} } }, checks: [], events: [] };
    await admin.query('INSERT INTO readiness_reports (client_id, version, state) VALUES ($1, 7, $2)', ['x', before]);
    await admin.end();
    const mark = (n: number) => ({ at: n, wall: n, detail: { n } });
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).reports.change('x', { counts: { 'op.create-order:exercised': 1 }, marks: { [`m${i}`]: mark(i) }, events: [{ at: i, item: 'op.create-order', outcome: 'exercised', note: `create ${i}` }] }),
      ),
    );
    await a.reports.change('x', { marks: { m0: null } });
    const report = await b.reports.get('x');
    expect(report.counts['op.create-order:exercised']).toBe(45);
    expect(Object.keys(report.marks).sort()).toEqual(['kept', ...Array.from({ length: 39 }, (_, i) => `m${i + 1}`)].sort());
    expect(report.events).toHaveLength(10);
    await a.close();
    await b.close();
  });
});

describe('a replica whose connections are all busy', () => {
  /** A storage whose only connection a unit of work holds until `release`, after reading once (the database answering). */
  async function holdingTheOnlyConnection() {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10, poolSize: 1, connectionTimeoutMs: 500 });
    await storage.orders.insert(orderRecord('80', 'a', 1));
    await storage.reports.get('a', { events: false }); // the report's own connections, opened
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding = storage.transaction(async (tx) => {
      await tx.orders.get('80');
      entered();
      await held;
    });
    await inside;
    return { storage, done: async () => (release(), await holding) };
  }

  it('answers Unavailable once the wait is over and, the database answering meanwhile, does not report it as failing', async () => {
    const { storage, done } = await holdingTheOnlyConnection();
    // The replica's other work goes on meanwhile (the readiness report has connections of its own).
    let waiting = true;
    let answers = 0;
    const otherWork = (async () => {
      while (waiting) {
        await storage.reports.get('a', { events: false });
        answers += 1;
      }
    })();
    const error = (await storage.orders.get('80').catch((e: unknown) => e)) as Unavailable;
    waiting = false;
    expect(answers).toBeGreaterThan(0);
    await otherWork;
    expect(error).toBeInstanceOf(Unavailable);
    expect(error.retryAfterSeconds).toBe(5);
    expect(error.message).toContain('stayed busy for 0.5 s');
    expect(storage.health()).toEqual({ writable: true, busyWaits: 1 });
    await done();
    expect((await storage.orders.get('80'))?.order_no).toBe('80');
    await storage.close();
  });

  it('reports an outage when the database answered nothing during the wait (connections that hang look the same to the pool)', async () => {
    const { storage, done } = await holdingTheOnlyConnection();
    await new Promise((resolve) => setTimeout(resolve, 600));
    const error = (await storage.orders.get('80').catch((e: unknown) => e)) as Unavailable;
    expect(error).toBeInstanceOf(Unavailable);
    expect(error.message).toContain('cannot save changes right now');
    expect(storage.health()).toMatchObject({ writable: false, error: 'ECONNECTION' });
    expect(storage.health().busyWaits).toBeUndefined();
    await done();
    // The next answer of the database clears it.
    expect((await storage.orders.get('80'))?.order_no).toBe('80');
    expect(storage.health()).toEqual({ writable: true });
    await storage.close();
  });

  it("hands a connection given back to one waiting request of each client in turn, each client's own first come first", async () => {
    const { storage, done } = await holdingTheOnlyConnection();
    const served: string[] = [];
    /** A request of `client` (none: not known yet), `work` in its scope; named in `served` once done. */
    const request = (name: string, client: string | undefined, work: () => Promise<unknown>) =>
      storage.requestScope.run(async () => {
        if (client !== undefined) storage.requestScope.client(client);
        await work();
        served.push(name);
      });
    const read = () => storage.orders.get('80');
    const unit = () => storage.transaction((tx) => tx.orders.get('80'));
    // Client a's three come first; b's one (a unit of work), then a request whose client is not known yet.
    const waiting = [request('a0', 'a', read), request('a1', 'a', unit), request('a2', 'a', read), request('b3', 'b', unit), request('unknown4', undefined, read)];
    await new Promise((resolve) => setTimeout(resolve, 50));
    await done();
    await Promise.all(waiting);
    // Without the gate (pg-pool's waiters first come first served) b's unit came last. a's two
    // point reads of one turn of the loop go together in a's lane (PointReads): one turn of a's.
    expect(served).toEqual(['a0', 'a2', 'b3', 'unknown4', 'a1']);
    expect(storage.health().busyWaits).toBeUndefined();
    await storage.close();
  });

  it("runs what the scheduler arms when told of a request's job outside that client's turns: its reads do not wait behind the client's backlog", async () => {
    const url = await server.freshDatabase();
    // Two connections: a client holds at most one of them (the other is kept for other lanes).
    const storage = await PostgresStorage.open({ url, requestLogSize: 10, poolSize: 2, connectionTimeoutMs: 2_000 });
    await storage.orders.insert(orderRecord('82', 'a', 1));
    let wokeUp: Promise<unknown> | undefined;
    // As the scheduler does: a job scheduled arms a timer whose wake-up reads the store.
    storage.onJobScheduled(() => {
      wokeUp ??= new Promise((resolve) => setTimeout(resolve, 10)).then(() => storage.orders.get('82'));
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const asA = <T>(work: () => Promise<T>) =>
      storage.requestScope.run(() => {
        storage.requestScope.client('a');
        return work();
      });
    await asA(() => storage.jobs.schedule({ kind: 'awb', key: '82', client_id: 'a', due_at: 5 }));
    // Client a then holds its one connection, and has another request waiting for its turn.
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const holding = asA(() => storage.transaction(async (tx) => (await tx.orders.get('82'), entered(), await held)));
    await inside;
    const backlog = asA(() => storage.orders.get('82'));
    // In a's lane the wake-up's read would wait until a's transaction ends; outside it, it takes the free connection.
    const outcome = await Promise.race([wokeUp!.then(() => 'read'), new Promise((resolve) => setTimeout(resolve, 1_000, 'waiting behind client a'))]);
    expect(outcome).toBe('read');
    release();
    await Promise.all([holding, backlog]);
    await storage.close();
  });

  it('does not make a unit of work wait for a connection again when it joins another or is tried again', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10, poolSize: 1, connectionTimeoutMs: 500 });
    await storage.orders.insert(orderRecord('81', 'a', 1));
    let attempts = 0;
    const seen = await storage.requestScope.run(async () => {
      storage.requestScope.client('a');
      return storage.transaction(async (tx) => {
        attempts += 1;
        const order = await storage.transaction((joined) => joined.orders.get('81'));
        if (attempts === 1) throw new Conflict('written by another replica first');
        return tx.orders.update({ ...order!, status: 'cancelled' });
      });
    });
    expect(attempts).toBe(2);
    expect(seen.status).toBe('cancelled');
    expect(storage.health().busyWaits).toBeUndefined();
    await storage.close();
  });

  it('refuses a connection timeout that is not a positive number of milliseconds', async () => {
    const url = await server.freshDatabase();
    for (const connectionTimeoutMs of [0, -1, Number.NaN]) {
      await expect(PostgresStorage.open({ url, requestLogSize: 10, connectionTimeoutMs })).rejects.toThrow(/connectionTimeoutMs must be a positive number/);
    }
  });
});
