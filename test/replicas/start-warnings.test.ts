import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

// The start's warnings when replicas of one database differ in what they were given: each test
// starts three or four CLI replicas (~10 s each), so the file runs in `npm run test:load`.
let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

describe('replicas of one database started with different settings', () => {
  it('warns at the start of a replica whose clients differ from those of the replica that started last, not of one whose agree in any order, and keeps their digest keyed by the database', async () => {
    const [url, elsewhereUrl] = [await server.freshDatabase(), await server.freshDatabase()];
    const replica = (at: string, ...tokens: string[]) => startCli(['--port', '0', '--database-url', at, ...tokens.flatMap((t) => ['--token', t]), '--log-level', 'warn']);
    const keptDigest = async (at: string) => {
      const db = new pg.Client({ connectionString: at });
      await db.connect();
      try {
        return (await db.query<{ value: { hmac: string } }>("SELECT value FROM meta WHERE key = 'clients_hmac'")).rows[0]?.value.hmac;
      } finally {
        await db.end();
      }
    };
    const warning = /the clients of this replica .* differ from those of the replica that started last/;
    const first = await replica(url, 'token-one', 'token-two');
    // A replica of an older version keeps its unkeyed digest under a key of its own, which this version leaves alone.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(`INSERT INTO meta (key, value) VALUES ('clients_config', '{"digest": "older", "at": "2026-01-01T00:00:00.000Z"}')`);
    await db.end();
    const same = await replica(url, 'token-two', 'token-one');
    const elsewhere = await replica(elsewhereUrl, 'token-one', 'token-two');
    const other = await replica(url, 'token-three');
    try {
      expect(first.output()).not.toMatch(warning);
      expect(same.output()).not.toMatch(warning);
      // The start's log lines may follow its banner, which startCli waits for.
      await other.printed('differ from those of the replica that started last');
      expect(other.output()).toMatch(warning);
      expect(other.output()).not.toContain('token-one');
      const [here, there] = [await keptDigest(url), await keptDigest(elsewhereUrl)];
      expect(here).toMatch(/^[0-9a-f]{64}$/);
      expect(there).toMatch(/^[0-9a-f]{64}$/);
      // The same clients, kept under each database's own secret.
      expect(here).not.toBe(there);
    } finally {
      await Promise.all([first.stop(), same.stop(), elsewhere.stop(), other.stop()]);
    }
  }, 60_000);

  it('warns at the start of a replica whose --clock differs from that of the replica that started last, not of one whose is the same', async () => {
    const url = await server.freshDatabase();
    const replica = (clock: string) => startCli(['--port', '0', '--database-url', url, '--token', 'token-one', '--clock', clock, '--log-level', 'warn']);
    const warning = /the clock of this replica \(--clock (\w+)\) differs from that of the replica that started last, at \S+ \(--clock (\w+)\): every replica of a shared database needs the same --clock/;
    const first = await replica('manual');
    const same = await replica('manual');
    const other = await replica('real');
    try {
      expect(first.output()).not.toMatch(warning);
      expect(same.output()).not.toMatch(warning);
      await other.printed('differs from that of the replica that started last');
      expect(other.output().match(warning)?.slice(1)).toEqual(['real', 'manual']);
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        expect((await db.query("SELECT value FROM meta WHERE key = 'clock_mode'")).rows[0]?.value).toMatchObject({ mode: 'real' });
      } finally {
        await db.end();
      }
    } finally {
      await Promise.all([first.stop(), same.stop(), other.stop()]);
    }
  }, 60_000);

  it('warns at the start of a replica whose --speed differs from that of the start before it, which it then sets for every replica', async () => {
    const url = await server.freshDatabase();
    const replica = (speed: string) => startCli(['--port', '0', '--database-url', url, '--token', 'token-one', '--speed', speed, '--log-level', 'warn']);
    const warning = /the --speed of this replica \((\d+)\) differs from that of the start before it \((\d+)\): the real clock runs at \d+ on every replica of this database from now on/;
    const first = await replica('1');
    const same = await replica('1');
    const other = await replica('60');
    try {
      expect(first.output()).not.toMatch(warning);
      expect(same.output()).not.toMatch(warning);
      await other.printed('differs from that of the start before it');
      expect(other.output().match(warning)?.slice(1)).toEqual(['60', '1']);
      const clock = (await (await fetch(`${first.url}/__sandbox/clock`, { headers: { authorization: 'Bearer token-one' } })).json()) as { speed: number };
      expect(clock.speed).toBe(60);
    } finally {
      await Promise.all([first.stop(), same.stop(), other.stop()]);
    }
  }, 60_000);

});
