import pg from 'pg';
import { Unavailable } from '../../shared/index.js';
import type { SharedClockRepository } from '../port.js';
import type { Db } from './db.js';
import { pointRead } from './point-reads.js';
import { RecentOrders } from './recent-orders.js';
import type { PreRead, PreReadOrder } from './request-scope.js';
import type { Prefetched } from './settings.js';
import type { ClientClock, ClientSettings, KeptClocks, KeptRealClock, Order } from '../../records/index.js';

/** The channel replicas are told on when a clock moved: `{ from, ids }`. */
export const CLOCKS_CHANNEL = 'sandbox_clocks';
/** The first key of the advisory locks that hold a clock during an advance (the second is the client id's hash). */
const ADVANCE_LOCK = 0x5a4e_c10c;
/** How long to wait before trying a lock another replica holds again (ms, growing to the second). */
const LOCK_RETRY_MS = [10, 25, 50, 100, 250];

interface ClockRow {
  client_id: string;
  offset_ms: string;
  now_ms: string | null;
  sim_base_ms: string | null;
  wall_base_ms: string | null;
  speed: number | null;
  previous_speed: number | null;
  started_speed: number | null;
}

const CLOCK_COLUMNS = 'client_id, offset_ms, now_ms, sim_base_ms, wall_base_ms, speed, previous_speed, started_speed';

function keptOf(rows: ClockRow[]): KeptClocks {
  const kept: KeptClocks = { clients: new Map() };
  for (const row of rows) {
    if (row.client_id !== '') {
      kept.clients.set(row.client_id, { offset_ms: Number(row.offset_ms), now_ms: Number(row.now_ms ?? 0) });
      continue;
    }
    if (row.now_ms !== null) kept.manualMs = Number(row.now_ms);
    if (row.sim_base_ms !== null && row.wall_base_ms !== null && row.speed !== null) {
      kept.real = {
        sim_base_ms: Number(row.sim_base_ms),
        wall_base_ms: Number(row.wall_base_ms),
        speed: Number(row.speed),
        previous_speed: Number(row.previous_speed ?? row.speed),
        started_speed: Number(row.started_speed ?? row.speed),
      };
    }
  }
  return kept;
}

/** A client's and the sandbox's clocks and the client's settings (see readWithSettings). */
const CLOCK_WITH_SETTINGS = pointRead(
  `SELECT ${CLOCK_COLUMNS}, NULL::jsonb AS data, NULL::integer AS version FROM clocks WHERE client_id = ANY($1)
   UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, data, version FROM client_settings WHERE client_id = $2`,
);

/** An order row's stamp: its xmin and the server's start (see CLOCK_WITH_SETTINGS_AND_ORDER). */
const STAMP = `xmin::text || '@' || extract(epoch FROM pg_postmaster_start_time())::text`;

/**
 * CLOCK_WITH_SETTINGS and the client's order of an AWB (its `data`, `version` and `stamp` in
 * a row of its own, `kind` 'o'); its data is null when the row is the version the replica
 * holds ($4, $5: see RecentOrders). The stamp is the row's xmin and the server's start:
 * xmin counts from the same start in every new cluster (a database made anew or restored,
 * a standby promoted), and behind PgBouncer a connection does not say which server it reaches.
 */
const CLOCK_WITH_SETTINGS_AND_ORDER = pointRead(
  `SELECT 'c' AS kind, ${CLOCK_COLUMNS}, NULL::jsonb AS data, NULL::integer AS version, NULL::text AS stamp FROM clocks WHERE client_id = ANY($1)
   UNION ALL SELECT 's', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, data, version, NULL FROM client_settings WHERE client_id = $2
   UNION ALL SELECT 'o', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, CASE WHEN version = $4 AND ${STAMP} = $5 THEN NULL ELSE data END, version, ${STAMP}
     FROM orders WHERE awb = $3 AND client_id = $2`,
);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The clocks table: one row per client clock that runs apart from the sandbox's, and the
 * sandbox's own ('' : its manual time, its real clock's pace). Moves keep the later value
 * per field (`GREATEST`) in one statement, so replicas writing at once never move a clock
 * back; every change is announced on `sandbox_clocks` in the same statement (delivered at
 * commit). Advances hold a session advisory lock per clock on a connection of their own.
 */
export class PgClocks implements SharedClockRepository {
  private readonly listeners: Array<(clientIds: readonly string[]) => void> = [];
  private locks: Promise<pg.Client> | undefined;
  /** The last advance of each clock on this replica: the next one waits for it. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Lock connections that dropped: the locks they held went with them. */
  private readonly dropped = new WeakSet<pg.Client>();
  private readonly recentOrders = new RecentOrders();

  constructor(
    private readonly db: Db,
    private readonly url: string,
    /** This replica's id: its own announcements are not told back to it. */
    readonly sender: string,
    /** Turns "cannot reach the database" into Unavailable (a 503), as the pool's calls are. */
    private readonly translate: (error: unknown) => unknown = (error) => error,
    /** Where the current request's first clock read puts its client's settings (see PostgresStorage.requestScope). */
    private readonly prefetch: () => PreRead | undefined = () => undefined,
    /** Keeps the client's order a request's first clock read found, for its handler. */
    private readonly keepOrder: (awb: string, clientId: string, row: PreReadOrder) => void = () => undefined,
  ) {}

  async read(clientIds?: readonly string[]): Promise<KeptClocks> {
    const prefetched = clientIds?.length === 1 && clientIds[0] !== '' ? this.prefetch() : undefined;
    if (prefetched) return this.readWithSettings(clientIds![0]!, prefetched);
    // The columns by name: every request reads its client's clock, and a statement of `*` is not prepared (see statement()).
    const { rows } =
      clientIds === undefined
        ? await this.db.query<ClockRow>(`SELECT ${CLOCK_COLUMNS} FROM clocks`)
        : await this.db.query<ClockRow>(`SELECT ${CLOCK_COLUMNS} FROM clocks WHERE client_id = ANY($1)`, [[...clientIds, '']]);
    return keptOf(rows);
  }

  /** The client's and the sandbox's clocks, and the client's settings (into `prefetched`), in one statement. */
  private async readWithSettings(clientId: string, { settings: prefetched, awb }: PreRead): Promise<KeptClocks> {
    if (awb !== undefined) return this.readWithOrder(clientId, prefetched, awb);
    const { rows } = await this.db.query<ClockRow & { data: ClientSettings | null; version: number | null }>(
      CLOCK_WITH_SETTINGS,
      [[clientId, ''], clientId],
    );
    const settings = rows.find((row) => row.client_id === null);
    prefetched.set(clientId, settings ? { data: settings.data!, version: settings.version! } : undefined);
    return keptOf(rows.filter((row) => row.client_id !== null));
  }

  /** readWithSettings, and the client's order of `awb` (kept for the request's handler). */
  private async readWithOrder(clientId: string, prefetched: Prefetched, awb: string): Promise<KeptClocks> {
    const held = this.recentOrders.held(clientId, awb);
    const { rows } = await this.db.query<ClockRow & { kind: 'c' | 's' | 'o'; data: unknown; version: number | null; stamp: string | null }>(CLOCK_WITH_SETTINGS_AND_ORDER, [
      [clientId, ''],
      clientId,
      awb,
      held.version,
      held.stamp,
    ]);
    const settings = rows.find((row) => row.kind === 's');
    prefetched.set(clientId, settings ? { data: settings.data as ClientSettings, version: settings.version! } : undefined);
    const row = rows.find((row) => row.kind === 'o');
    const order = this.recentOrders.found(clientId, awb, row && { data: row.data as Order | null, version: row.version!, stamp: row.stamp! });
    if (order !== undefined) this.keepOrder(awb, clientId, order);
    return keptOf(rows.filter((row) => row.kind === 'c'));
  }

  async moveOn(clients: ReadonlyMap<string, ClientClock>, manualMs?: number): Promise<KeptClocks> {
    const ids = [...clients.keys()];
    const offsets = [...clients.values()].map((c) => Math.round(c.offset_ms));
    const nows = [...clients.values()].map((c) => Math.round(c.now_ms));
    if (manualMs !== undefined) {
      ids.push('');
      offsets.push(0);
      nows.push(Math.round(manualMs));
    }
    if (ids.length === 0) return { clients: new Map() };
    const { rows } = await this.db.query<ClockRow>(
      `WITH moved AS (
         INSERT INTO clocks (client_id, offset_ms, now_ms) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])
         ON CONFLICT (client_id) DO UPDATE SET offset_ms = GREATEST(clocks.offset_ms, excluded.offset_ms), now_ms = GREATEST(clocks.now_ms, excluded.now_ms), version = clocks.version + 1
         RETURNING *)
       SELECT moved.*, pg_notify($4, $5) FROM moved`,
      [ids, offsets, nows, CLOCKS_CHANNEL, this.announcement(ids)],
    );
    return keptOf(rows);
  }

  async setReal(state: KeptRealClock, expected: KeptRealClock | undefined): Promise<boolean> {
    const { rows } = await this.db.query(
      `WITH set AS (
         INSERT INTO clocks (client_id, sim_base_ms, wall_base_ms, speed, previous_speed, started_speed) VALUES ('', $1, $2, $3, $4, $5)
         ON CONFLICT (client_id) DO UPDATE SET sim_base_ms = excluded.sim_base_ms, wall_base_ms = excluded.wall_base_ms, speed = excluded.speed,
           previous_speed = excluded.previous_speed, started_speed = excluded.started_speed, version = clocks.version + 1
         WHERE clocks.sim_base_ms IS NOT DISTINCT FROM $6 AND clocks.wall_base_ms IS NOT DISTINCT FROM $7
           AND clocks.speed IS NOT DISTINCT FROM $8 AND clocks.started_speed IS NOT DISTINCT FROM $9
         RETURNING 1)
       SELECT pg_notify($10, $11) FROM set`,
      [
        Math.round(state.sim_base_ms),
        Math.round(state.wall_base_ms),
        state.speed,
        state.previous_speed,
        state.started_speed,
        expected ? Math.round(expected.sim_base_ms) : null,
        expected ? Math.round(expected.wall_base_ms) : null,
        expected?.speed ?? null,
        expected?.started_speed ?? null,
        CLOCKS_CHANNEL,
        this.announcement(['']),
      ],
    );
    return rows.length === 1;
  }

  async exclusive<T>(clientIds: readonly string[], fn: () => Promise<T>): Promise<T> {
    const keys = [...new Set(clientIds)].sort();
    // Session locks are this replica's whoever takes them: its own advances of a clock queue here first.
    const before = keys.map((key) => this.tails.get(key));
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    for (const key of keys) this.tails.set(key, mine);
    let holder: pg.Client | undefined;
    try {
      await Promise.all(before);
      // All of them or none: holding some while waiting for the rest would let one
      // partner's busy clock stall every other clock an advance of all of them took.
      for (let attempt = 0; !holder; attempt += 1) {
        holder = await this.tryLockAll(keys);
        if (!holder) await sleep(LOCK_RETRY_MS[Math.min(attempt, LOCK_RETRY_MS.length - 1)]!);
      }
      const result = await fn();
      // The connection that held the locks dropped meanwhile: another replica may have
      // advanced the same clock alongside, so this advance is not acknowledged.
      if (this.dropped.has(holder)) throw new Unavailable('The database connection that held this clock during the advance dropped; the clock may have moved. Read GET /__sandbox/clock and advance again if needed.');
      return result;
    } catch (error) {
      throw this.translate(error);
    } finally {
      if (holder && !this.dropped.has(holder)) {
        await holder.query('SELECT pg_advisory_unlock($1, hashtext(k)) FROM unnest($2::text[]) AS k', [ADVANCE_LOCK, keys]).catch(() => this.drop(holder!));
      }
      done();
      for (const key of keys) if (this.tails.get(key) === mine) this.tails.delete(key);
    }
  }

  onChange(listener: (clientIds: readonly string[]) => void): void {
    this.listeners.push(listener);
  }

  /** A notification on `sandbox_clocks` arrived: tells the listeners, unless this replica sent it. */
  notified(payload: string | undefined): void {
    let message: unknown;
    try {
      message = JSON.parse(payload ?? '');
    } catch {
      return;
    }
    const { from, ids } = (message ?? {}) as { from?: unknown; ids?: unknown };
    if (from === this.sender || !Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return;
    for (const listener of this.listeners) listener(ids as string[]);
  }

  async close(): Promise<void> {
    const locks = this.locks;
    this.locks = undefined;
    if (locks) await (await locks.catch(() => undefined))?.end().catch(() => undefined);
  }

  private announcement(ids: string[]): string {
    // NOTIFY payloads are limited to 8000 bytes: past that, every clock is named as changed (none).
    const payload = JSON.stringify({ from: this.sender, ids });
    return payload.length < 7_900 ? payload : JSON.stringify({ from: this.sender, ids: [] });
  }

  /** The connection the advance locks live on (session locks: it is the holder); made again after a drop. */
  private lockConnection(): Promise<pg.Client> {
    this.locks ??= (async () => {
      // Bounded like the pool's: a silent connection must not hold every advance of this replica.
      const client = new pg.Client({ connectionString: this.url, keepAlive: true, keepAliveInitialDelayMillis: 10_000, connectionTimeoutMillis: 5_000, query_timeout: 15_000, statement_timeout: 10_000 });
      client.on('error', () => this.drop(client));
      client.on('end', () => this.drop(client));
      await client.connect();
      return client;
    })();
    const made = this.locks;
    made.catch(() => {
      if (this.locks === made) this.locks = undefined;
    });
    return made;
  }

  /** A lock connection is gone (or no longer to be trusted): its locks went with it; the next advance connects again. */
  private drop(client: pg.Client): void {
    if (this.dropped.has(client)) return;
    this.dropped.add(client);
    void this.locks?.then((current) => {
      if (current === client) this.locks = undefined;
    }, () => undefined);
    void client.end().catch(() => undefined);
  }

  /** Takes every key's lock, or none (answers undefined: some other replica holds one). */
  private async tryLockAll(keys: readonly string[]): Promise<pg.Client | undefined> {
    const client = await this.lockConnection();
    try {
      const { rows } = await client.query<{ key: string; locked: boolean }>('SELECT k AS key, pg_try_advisory_lock($1, hashtext(k)) AS locked FROM unnest($2::text[]) AS k', [ADVANCE_LOCK, keys]);
      if (rows.every((row) => row.locked)) return client;
      const taken = rows.filter((row) => row.locked).map((row) => row.key);
      if (taken.length > 0) await client.query('SELECT pg_advisory_unlock($1, hashtext(k)) FROM unnest($2::text[]) AS k', [ADVANCE_LOCK, taken]);
      return undefined;
    } catch (error) {
      this.drop(client);
      throw error;
    }
  }
}
