import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { runCli, spawnCli, startCli, type RunningCli } from '../support/cli.js';
import { slowTcpProxy } from '../support/proxy.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { Receiver } from '../webhooks/receiver.js';

// The database stops and starts again under running replicas (issue 46: a replica survives
// its database): health follows it both ways, a replica started before it waits for it,
// and an outage after a create load takes no replica down and loses no acknowledged order.

const TOKEN = 'outage-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` every 200 ms until `done`, for at most `ms`; answers the last value and how long it took. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms: number): Promise<{ value: T; tookMs: number }> {
  const start = Date.now();
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() - start > ms) return { value, tookMs: Date.now() - start };
    await sleep(200);
  }
}

const health = async (url: string) => (await (await fetch(`${url}/__sandbox/health`)).json()) as { store: string; store_error?: string };

/** Follows a replica's exit: `exitCode()` is undefined while it runs. */
function watchExit(cli: RunningCli): () => number | null | undefined {
  let code: number | null | undefined;
  cli.process.once('exit', (c) => (code = c));
  return () => code;
}

/** Stops (SIGSTOP) or resumes (SIGCONT) the server's processes: a database that hangs rather than refuses. */
function freeze(signal: 'SIGSTOP' | 'SIGCONT'): void {
  const postmaster = Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  for (const pid of [postmaster, ...children]) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      // A backend that ended between the listing and the signal (a connection closed) has nothing left to stop.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

describe('a replica whose database stops and starts again', () => {
  it('idle, on a manual clock: health says degraded within 5 s of the stop (with the current error) and ok within 5 s of the start', async () => {
    const cli = await startCli(['--port', '0', '--database-url', await server.freshDatabase(), '--token', TOKEN, '--clock', 'manual', '--log-level', 'warn']);
    const exited = watchExit(cli);
    try {
      expect(await health(cli.url)).toMatchObject({ store: 'ok' });
      await sleep(1_500); // idle: nothing but health asks the database
      await server.pause();
      const down = await until(() => health(cli.url), (h) => h.store === 'degraded', 5_000);
      expect(down.value, cli.output().slice(-2_000)).toMatchObject({ store: 'degraded', store_error: expect.any(String) });
      expect(down.tookMs).toBeLessThan(5_000);
      // The error shown is the current failure's: with the server gone, a refused connection.
      const current = await until(() => health(cli.url), (h) => h.store_error === 'ECONNREFUSED', 3_000);
      expect(current.value.store_error).toBe('ECONNREFUSED');
      // The metrics are still scraped: the process's own figures, the store's left out, and the store down.
      const scrapedDown = await fetch(`${cli.url}/__sandbox/metrics`);
      expect(scrapedDown.status).toBe(200);
      const down2 = await scrapedDown.text();
      expect(down2).toMatch(/^sandbox_store_up 0$/m);
      expect(down2).toMatch(/^process_resident_memory_bytes \d+$/m);
      expect(down2).toMatch(/^sandbox_orders NaN$/m); // as the exposition format spells it (prom-client writes Nan)
      await server.resume();
      const up = await until(() => health(cli.url), (h) => h.store === 'ok', 5_000);
      expect(up.value).toEqual(expect.objectContaining({ store: 'ok' }));
      expect(up.value).not.toHaveProperty('store_error');
      expect(up.tookMs).toBeLessThan(5_000);
      const scrapedUp = await (await fetch(`${cli.url}/__sandbox/metrics`)).text();
      expect(scrapedUp).toMatch(/^sandbox_store_up 1$/m);
      expect(scrapedUp).toMatch(/^sandbox_orders 0$/m);
      expect(scrapedUp).toMatch(/^sandbox_jobs_pending \d+$/m);
      expect(exited()).toBeUndefined();
    } finally {
      await server.resume().catch(() => undefined);
      if (exited() === undefined) await cli.stop();
    }
  }, 60_000);

  it('a database that answers reads but refuses writes (read-only, as a standby after a failover): health says degraded with 25006 while reads are served, and ok once a write is taken', async () => {
    const url = await server.freshDatabase();
    const name = new URL(url).pathname.slice(1);
    const cli = await startCli(['--port', '0', '--database-url', url, '--token', TOKEN, '--clock', 'manual', '--log-level', 'warn']);
    const exited = watchExit(cli);
    const admin = new pg.Client({ connectionString: `${server.serverUrl}/postgres` });
    await admin.connect();
    // New sessions of the database are read-only: its sessions are ended, and the replica's next ones refuse writes.
    const readOnly = async (on: boolean) => {
      await admin.query(on ? `ALTER DATABASE "${name}" SET default_transaction_read_only = on` : `ALTER DATABASE "${name}" RESET default_transaction_read_only`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    };
    const create = async () => (await fetch(`${cli.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) })).status;
    try {
      expect(await create()).toBe(201);
      await readOnly(true);
      const refused = await until(async () => [await create(), (await health(cli.url)).store_error], ([status, error]) => status === 503 && error === '25006', 10_000);
      expect(refused.value).toEqual([503, '25006']);
      // Reads are served, and the probe's SELECT is answered each second: health still says writes are refused.
      expect((await fetch(`${cli.url}/__sandbox/orders?limit=1`, { headers })).status).toBe(200);
      await sleep(2_500);
      expect(await health(cli.url)).toMatchObject({ store: 'degraded', store_error: '25006' });

      await readOnly(false);
      expect((await until(create, (status) => status === 201, 10_000)).value).toBe(201);
      expect(await health(cli.url)).toMatchObject({ store: 'ok' });
      expect(exited()).toBeUndefined();
    } finally {
      await admin.end();
      if (exited() === undefined) await cli.stop();
    }
  }, 60_000);

  it('a table held under a lock past the statement timeout: the request waiting on it answers 503, and the log says why, though health\'s own check is answered', async () => {
    const url = await server.freshDatabase();
    const cli = await startCli(['--port', '0', '--database-url', url, '--token', TOKEN, '--clock', 'manual', '--log-level', 'warn']);
    const exited = watchExit(cli);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      const created = await fetch(`${cli.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      expect(created.status).toBe(201);
      const [order] = ((await (await fetch(`${cli.url}/__sandbox/orders?limit=1`, { headers })).json()) as { orders: Array<{ order_no: string }> }).orders;
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      const read = await fetch(`${cli.url}/__sandbox/orders/${order!.order_no}`, { headers, signal: AbortSignal.timeout(30_000) });
      expect(read.status).toBe(503);
      const line = await until(async () => cli.output(), (output) => output.includes('a database statement failed (57014'), 5_000);
      expect(line.value).toMatch(/"level":40,[^\n]*"error":"57014"[^\n]*a database statement failed \(57014, a statement timeout: a lock held by another session/);
      await holder.query('ROLLBACK');
      expect((await fetch(`${cli.url}/__sandbox/orders/${order!.order_no}`, { headers })).status).toBe(200);
      expect(exited()).toBeUndefined();
    } finally {
      await holder.end();
      if (exited() === undefined) await cli.stop();
    }
  }, 60_000);

  it('a database that hangs: once health says degraded, requests answer 503 at once (but one a second), not each after its own timeout; served again once it answers', async () => {
    const cli = await startCli(['--port', '0', '--database-url', await server.freshDatabase(), '--token', TOKEN, '--clock', 'manual', '--log-level', 'warn']);
    const exited = watchExit(cli);
    try {
      expect((await fetch(`${cli.url}/__sandbox/orders`, { headers })).status).toBe(200);
      freeze('SIGSTOP');
      const down = await until(() => health(cli.url), (h) => h.store === 'degraded', 10_000);
      expect(down.value.store).toBe('degraded');
      // A scrape ends within Prometheus's own timeout (10 s), not after the statements' (15 s): the store's figures given up after 2 s.
      const scraping = Date.now();
      const scraped = await fetch(`${cli.url}/__sandbox/metrics`, { signal: AbortSignal.timeout(30_000) });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(/^sandbox_store_up 0$/m);
      expect(Date.now() - scraping).toBeLessThan(8_000);
      // Six at once: each answers 503 at once but the one a second that still goes to the database (it waits for its own timeout).
      const answers = await Promise.all(
        [0, 1, 2, 3, 4, 5].map(async (i) => {
          const sent = Date.now();
          const [method, path, body] = i % 2 === 0 ? ['GET', '/__sandbox/orders', undefined] : ['POST', '/v1/order', JSON.stringify(createRequest(1))];
          const res = await fetch(`${cli.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
          return { status: res.status, retryAfter: res.headers.get('retry-after'), ms: Date.now() - sent };
        }),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(503));
      for (const answer of answers) expect(answer.retryAfter).toMatch(/^\d+$/);
      // (Two may be the second's call on a busy machine, where six requests' first statements span more than a second.)
      expect(answers.filter((a) => a.ms < 3_000).length, JSON.stringify(answers)).toBeGreaterThanOrEqual(4);
      freeze('SIGCONT');
      const up = await until(async () => (await fetch(`${cli.url}/__sandbox/orders`, { headers })).status, (status) => status === 200, 10_000);
      expect(up.value).toBe(200);
      expect(exited()).toBeUndefined();
    } finally {
      try {
        freeze('SIGCONT');
      } catch {
        // already running
      }
      if (exited() === undefined) await cli.stop();
    }
  }, 60_000);

  it('a database too slow for health\'s 1 s check: health may say degraded, but requests are still served (one a second goes through, and its answer ends it)', async () => {
    const direct = new URL(await server.freshDatabase());
    const proxy = await slowTcpProxy(Number(direct.port), 0);
    const url = new URL(direct.href);
    url.port = String(proxy.port);
    const cli = await startCli(['--port', '0', '--database-url', url.href, '--token', TOKEN, '--clock', 'manual', '--log-level', 'warn']);
    const exited = watchExit(cli);
    try {
      expect((await fetch(`${cli.url}/__sandbox/orders`, { headers })).status).toBe(200);
      // 300 ms each way: a new connection takes more than the check's second; the blip makes every connection new.
      proxy.delayMs = 300;
      proxy.dropAll();
      const down = await until(() => health(cli.url), (h) => h.store === 'degraded', 10_000);
      expect(down.value.store).toBe('degraded');
      const served = await until(async () => (await fetch(`${cli.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)), signal: AbortSignal.timeout(30_000) })).status, (status) => status === 201, 30_000);
      expect(served.value).toBe(201);
      expect(exited()).toBeUndefined();
    } finally {
      if (exited() === undefined) await cli.stop();
      await proxy.close();
    }
  }, 90_000);

  it('listens on one connection through three restarts of its database, however often the old one errs', async () => {
    const url = await server.freshDatabase();
    const storage = await PostgresStorage.open({ url, requestLogSize: 10, onError: () => undefined });
    const listening = async () => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
        return Number(rows[0]!.n);
      } finally {
        await admin.end();
      }
    };
    try {
      expect(await listening()).toBe(1);
      for (let restart = 1; restart <= 3; restart += 1) {
        await server.pause();
        await sleep(2_500); // a few tries refused meanwhile
        await server.resume();
        const after = await until(listening, (n) => n >= 1, 20_000);
        await sleep(3_000); // time for any second chain of tries to connect too
        expect({ restart, listening: await listening() }).toEqual({ restart, listening: 1 });
        expect(after.value).toBe(1);
      }
    } finally {
      await server.resume().catch(() => undefined);
      await storage.close();
    }
  }, 120_000);

  it('started before its database: it waits, logging each try, and serves once the database is up', async () => {
    const databaseUrl = await server.freshDatabase();
    await server.pause();
    const child = spawnCli(['--port', '0', '--database-url', databaseUrl, '--token', TOKEN, '--clock', 'manual', '--database-wait', '60s', '--log-level', 'info']);
    let output = '';
    let exit: number | null | undefined;
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => (exit = code));
    try {
      // Two tries refused, each said in the log, and the replica still waiting.
      await until(async () => output, (text) => (text.match(/cannot be reached yet/g) ?? []).length >= 2, 30_000);
      expect(output).toMatch(/the database cannot be reached yet \(ECONNREFUSED.*\); trying again in/);
      expect((output.match(/cannot be reached yet/g) ?? []).length).toBeGreaterThanOrEqual(2);
      expect(exit).toBeUndefined();
      await server.resume();
      const listening = await until(async () => /listening on (http:\/\/\S+)/.exec(output), (match) => match !== null || exit !== undefined, 30_000);
      expect(listening.value, output).not.toBeNull();
      const url = listening.value![1]!;
      const created = await fetch(`${url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      expect(created.status).toBe(201);
      expect(await health(url)).toMatchObject({ store: 'ok' });
      // The start's log line names the database (without its password), not the data file it does not use.
      const startedLine = output.split('\n').find((line) => line.includes('"msg":"started"'));
      expect(startedLine).toMatch(/"database":"postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/sandbox_/);
      expect(startedLine).not.toContain('"data"');
      expect(startedLine).not.toContain(new URL(databaseUrl).password);
    } finally {
      if (exit === undefined) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await gone;
      }
      await server.resume().catch(() => undefined);
    }
  }, 90_000);

  it('started before its database, whose wait runs out: exits 1 saying the database could not be reached', async () => {
    const databaseUrl = await server.freshDatabase();
    await server.pause();
    try {
      const started = Date.now();
      const run = await runCli(['--port', '0', '--database-url', databaseUrl, '--token', TOKEN, '--database-wait', '2s', '--log-level', 'warn']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/shipping-sandbox: The database could not be reached within 2s \(--database-wait\), \d+ tries; the last failed with ECONNREFUSED/);
      expect(run.stdout).toMatch(/cannot be reached yet/);
      expect(Date.now() - started).toBeLessThan(20_000);
      // No wait: one try, and the wait said with its unit.
      const once = await runCli(['--port', '0', '--database-url', databaseUrl, '--token', TOKEN, '--database-wait', '0', '--log-level', 'warn']);
      expect(once.code).toBe(1);
      expect(once.stderr).toMatch(/shipping-sandbox: The database could not be reached within 0s \(--database-wait\), 1 try; the last failed with ECONNREFUSED/);
    } finally {
      await server.resume();
    }
  }, 60_000);

  it('started with a wrong password or a database that does not exist: exits 1 at once naming the database (password masked) and --database-url', async () => {
    const databaseUrl = new URL(await server.freshDatabase());
    const wrongPassword = new URL(databaseUrl);
    wrongPassword.password = 'not-the-password';
    const missing = new URL(databaseUrl);
    missing.pathname = '/nosuchdb';
    const shown = (url: URL) => `postgres://postgres:****@${url.host}${url.pathname}`;
    for (const [url, said] of [
      [wrongPassword, 'password authentication failed for user "postgres"'],
      [missing, 'database "nosuchdb" does not exist'],
    ] as const) {
      const started = Date.now();
      const run = await runCli(['--port', '0', '--database-url', url.toString(), '--token', TOKEN, '--database-wait', '60s', '--log-level', 'warn']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`shipping-sandbox: The database at ${shown(url)} refused the connection: ${said}. Check --database-url (SANDBOX_DATABASE_URL).`);
      expect(run.stderr).not.toContain('not-the-password');
      expect(run.stderr).not.toContain(databaseUrl.password);
      expect(Date.now() - started).toBeLessThan(20_000);
    }
  }, 60_000);

  it('stopped right after a create load (AWB jobs and webhook attempts running): both replicas stay up, answer 503, serve again after it, and lose no acknowledged order', async () => {
    const receiver = await Receiver.start();
    // Every third webhook is held until the attempt times out: attempts are in flight when the database stops.
    receiver.respond = (_webhook, index) => (index % 3 === 0 ? { status: 200, hang: true } : { status: 200, body: 'ok' });
    const databaseUrl = await server.freshDatabase();
    const args = ['--port', '0', '--database-url', databaseUrl, '--token', TOKEN, '--webhook-url', receiver.url, '--awb-delay', '1s-3s', '--webhook-timeout', '2s', '--log-level', 'warn'];
    const replicas = [await startCli(args), await startCli(args)];
    const exits = replicas.map(watchExit);
    const alive = () => exits.map((exit) => exit());
    try {
      // 3,000 orders: 60 creates of 50 items, 6 at a time, over both replicas.
      const created: string[] = [];
      for (let round = 0; round < 10; round += 1) {
        const answers = await Promise.all(
          Array.from({ length: 6 }, async (_, i) => {
            const res = await fetch(`${replicas[i % 2]!.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(50)) });
            expect(res.status).toBe(201);
            return ((await res.json()) as { order_numbers: string[] }).order_numbers;
          }),
        );
        created.push(...answers.flat());
      }
      expect(created).toHaveLength(3_000);
      expect(receiver.received.length).toBeLessThan(3_000); // AWB jobs still to run

      await server.pause();
      const outage = Date.now();
      // Meanwhile: every replica up, answering 503 — a read says it could not read, a write that nothing was saved.
      let reads = 0;
      while (Date.now() - outage < 8_000) {
        for (const [i, replica] of replicas.entries()) {
          const read = await fetch(`${replica.url}/__sandbox/orders/${created[reads % created.length]}`, { headers }).catch((error: unknown) => {
            throw new Error(`replica ${i} does not answer (${String(error)}; exit code ${exits[i]!()}):\n${replica.output().slice(-2_000)}`);
          });
          if (read.status === 503) {
            const body = (await read.json()) as { message: string };
            expect(body.message).toMatch(/cannot read from its database/);
            expect(body.message).not.toMatch(/sav/);
            expect(read.headers.get('retry-after')).toEqual(expect.any(String));
            reads += 1;
          } else expect(read.status).toBe(200); // possible only before the replica noticed
        }
        await sleep(250);
      }
      expect(reads).toBeGreaterThan(0);
      for (const replica of replicas) {
        const write = await fetch(`${replica.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
        expect(write.status).toBe(503);
        expect(((await write.json()) as { message: string }).message).toMatch(/nothing was saved/);
        // A read asked in a body is a read too.
        const count = await fetch(`${replica.url}/__sandbox/requests/count`, { method: 'POST', headers, body: JSON.stringify({ operation_id: 'createOrder' }) });
        expect(count.status).toBe(503);
        expect(((await count.json()) as { message: string }).message).toMatch(/cannot read from its database/);
        expect(await health(replica.url)).toMatchObject({ store: 'degraded' });
      }
      expect(alive(), replicas.map((r) => r.output().slice(-1_500)).join('\n---\n')).toEqual([undefined, undefined]);

      await server.resume();
      for (const replica of replicas) {
        const back = await until(async () => (await fetch(`${replica.url}/__sandbox/orders/${created[0]}`, { headers })).status, (status) => status === 200, 30_000);
        expect(back.value).toBe(200);
        expect((await until(() => health(replica.url), (h) => h.store === 'ok', 10_000)).value.store).toBe('ok');
      }
      // No acknowledged order lost: each of the 3,000 reads back, through either replica.
      const missing: string[] = [];
      for (let at = 0; at < created.length; at += 25) {
        await Promise.all(
          created.slice(at, at + 25).map(async (orderNo, i) => {
            const res = await fetch(`${replicas[i % 2]!.url}/__sandbox/orders/${orderNo}`, { headers });
            if (res.status !== 200) missing.push(`${orderNo}: ${res.status}`);
            await res.arrayBuffer();
          }),
        );
      }
      expect(missing).toEqual([]);
      const again = await fetch(`${replicas[1]!.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      expect(again.status).toBe(201);
      expect(alive()).toEqual([undefined, undefined]);
      for (const replica of replicas) expect(replica.output()).not.toMatch(/Unhandled|uncaught/i);
    } finally {
      await server.resume().catch(() => undefined);
      for (const [i, replica] of replicas.entries()) if (exits[i]!() === undefined) await replica.stop();
      await receiver.close();
    }
  }, 240_000);
});
