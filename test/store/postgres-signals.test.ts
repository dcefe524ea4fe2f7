import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundFailures, Unavailable } from '../../src/shared/index.js';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

describe('PostgreSQL signals (the listen hand-off between replicas)', () => {
  it('a message one replica publishes reaches every replica subscribed to its channel, and no other channel', async () => {
    const url = await server.freshDatabase();
    const [a, b] = await Promise.all([1, 2].map(() => PostgresStorage.open({ url, requestLogSize: 10 })));
    try {
      const got: Array<[string, string]> = [];
      await a!.signals.subscribe('sandbox_listen', (p) => got.push(['a', p]));
      await b!.signals.subscribe('sandbox_listen', (p) => got.push(['b', p]));
      await b!.signals.subscribe('sandbox_other', (p) => got.push(['b-other', p]));
      await a!.signals.publish('sandbox_listen', '{"t":"who"}');
      const end = Date.now() + 5_000;
      while (got.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      expect(got.sort()).toEqual([['a', '{"t":"who"}'], ['b', '{"t":"who"}']]);
      await expect(a!.signals.publish('bad channel; drop', 'x')).rejects.toThrow(/not a channel name/);
    } finally {
      await a!.close();
      await b!.close();
    }
  });

  it('its pool is built like the others (bounded waits, errors handled on every connection) and a publish works again after the server ends its sessions', async () => {
    const url = await server.freshDatabase();
    const a = await PostgresStorage.open({ url, requestLogSize: 10 });
    try {
      const pool = (a.signals as any).pool;
      expect(pool.options.connectionTimeoutMillis).toBeGreaterThan(0);
      expect(pool.options.statement_timeout).toBeGreaterThan(0);
      expect(pool.listenerCount('connect')).toBeGreaterThan(0);
      await a.signals.subscribe('sandbox_listen', () => undefined);
      expect((a.signals as any).kept.client.connection._keepAlive).toBe(true);
      // The connection that hears other replicas' jobs and clock changes too.
      await (a as any).listener.listen();
      expect((a as any).listener.client.connection._keepAlive).toBe(true);
      expect((a as any).listener.client._connectionTimeoutMillis).toBeGreaterThan(0);
      await a.signals.publish('sandbox_listen', 'one');
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      await admin.end();
      await new Promise((r) => setTimeout(r, 200));
      let published = false;
      for (let i = 0; i < 20 && !published; i++) published = await a.signals.publish('sandbox_listen', 'two').then(() => true, () => false);
      expect(published).toBe(true);
    } finally {
      await a.close().catch(() => undefined);
    }
  }, 30_000);

  it("a publish or subscribe the database's outage fails is the store's Unavailable, which the hand-off's log takes as a warning without a stack", async () => {
    const url = await server.freshDatabase();
    const [a, b] = await Promise.all([1, 2].map(() => PostgresStorage.open({ url, requestLogSize: 10, onError: () => undefined })));
    const lines: Array<{ level: number; msg: string; err?: unknown; error?: string }> = [];
    const failed = backgroundFailures(pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }));
    try {
      await a!.signals.publish('sandbox_listen', 'before');
      // A session the server ends as it shuts down (57P01, or 57P03 on a connection made meanwhile), then a connection refused.
      await server.pause();
      const publishing = await a!.signals.publish('sandbox_listen', 'during').then(() => undefined, (error: unknown) => error);
      expect(publishing).toBeInstanceOf(Unavailable);
      const subscribing = await b!.signals.subscribe('sandbox_listen', () => undefined).then(() => undefined, (error: unknown) => error);
      expect(subscribing).toBeInstanceOf(Unavailable);
      failed('listener hand-off', publishing, 'the replica that asked holds the delivery for the listener, or counts the attempt as timed out');
      expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'listener hand-off: the replica that asked holds the delivery for the listener, or counts the attempt as timed out, the store being unavailable' })]);
      expect(lines[0]!.err).toBeUndefined();
      expect(lines[0]!.error).toMatch(/the database: (57P0[13]|ECONNREFUSED|ECONNRESET|ECONNECTION)/);
      // Health says so too: the signals' failure is the outage every other call sees.
      expect(a!.health()).toMatchObject({ writable: false });
    } finally {
      await server.resume();
      await a!.close().catch(() => undefined);
      await b!.close().catch(() => undefined);
    }
  }, 60_000);

  it('listens again within about 2 s of the database coming back after an outage of 20 s, so hand-offs between replicas are not held for the length of a growing wait', async () => {
    const url = await server.freshDatabase();
    const [a, b] = await Promise.all([1, 2].map(() => PostgresStorage.open({ url, requestLogSize: 10, onError: () => undefined })));
    try {
      const got: string[] = [];
      await a!.signals.subscribe('sandbox_listen', (p) => got.push(p));
      await server.pause();
      // A wait that doubled from 1 s would try again 15 s and 31 s into the outage: 11 s after the database is back.
      await new Promise((r) => setTimeout(r, 20_000));
      await server.resume();
      const back = Date.now();
      let heardAfter: number | undefined;
      for (let n = 0; heardAfter === undefined && Date.now() - back < 12_000; n++) {
        await b!.signals.publish('sandbox_listen', `try ${n}`).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 100));
        if (got.length > 0) heardAfter = Date.now() - back;
      }
      expect(heardAfter).toBeDefined();
      // About 2 s (the longest wait between tries) and the reconnection; a doubling wait would take 11 s.
      expect(heardAfter!).toBeLessThan(7_000);
    } finally {
      await a!.close().catch(() => undefined);
      await b!.close().catch(() => undefined);
    }
  }, 60_000);
});
