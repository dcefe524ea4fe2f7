import { setTimeout as sleep } from 'node:timers/promises';
import pg, { type Pool } from 'pg';

/**
 * A migration that builds an index without holding writes (`CREATE INDEX CONCURRENTLY`,
 * which cannot run in a transaction): replicas of the version before keep writing while
 * it builds, however big the table. A build cut short leaves an invalid index, which the
 * next start drops and builds again.
 */
export interface IndexMigration {
  index: string;
  on: string;
}

/**
 * The PostgreSQL schema, as numbered migrations. Migrations only add (tables, columns,
 * indexes), so a replica of the version before keeps running during a rolling upgrade.
 * Identifiers compare byte-wise (`COLLATE "C"`), as the embedded store compares them.
 */
export const MIGRATIONS: ReadonlyArray<string | IndexMigration> = [
  `CREATE TABLE orders (
     order_no text COLLATE "C" PRIMARY KEY,
     client_id text COLLATE "C" NOT NULL,
     created_at bigint NOT NULL,
     awb text COLLATE "C" UNIQUE,
     batch_id text COLLATE "C" NOT NULL,
     status text NOT NULL,
     scenario text NOT NULL,
     courier_code text NOT NULL,
     order_code text COLLATE "C" NOT NULL,
     version integer NOT NULL,
     data jsonb NOT NULL
   );
   CREATE INDEX orders_by_client ON orders (client_id, created_at DESC, order_no DESC);
   CREATE INDEX orders_by_batch ON orders (batch_id);
   CREATE INDEX orders_by_age ON orders (created_at, order_no);
   CREATE TABLE deliveries (
     id text COLLATE "C" PRIMARY KEY,
     client_id text COLLATE "C" NOT NULL,
     seq bigint NOT NULL,
     created_at bigint NOT NULL,
     status text NOT NULL,
     order_no text COLLATE "C",
     event text NOT NULL,
     version integer NOT NULL,
     data jsonb NOT NULL
   );
   CREATE INDEX deliveries_by_client ON deliveries (client_id, seq DESC, id DESC);
   CREATE INDEX deliveries_by_age ON deliveries (created_at, id);
   CREATE TABLE client_settings (client_id text COLLATE "C" PRIMARY KEY, version integer NOT NULL, data jsonb NOT NULL);
   CREATE TABLE counters (name text COLLATE "C" PRIMARY KEY, value bigint NOT NULL);
   CREATE TABLE meta (key text COLLATE "C" PRIMARY KEY, value jsonb NOT NULL);
   CREATE TABLE jobs (
     kind text NOT NULL,
     key text COLLATE "C" NOT NULL,
     client_id text COLLATE "C" NOT NULL,
     due_at bigint NOT NULL,
     version integer NOT NULL,
     claimed_by text,
     lease_until bigint,
     PRIMARY KEY (kind, key)
   );
   CREATE INDEX jobs_by_due ON jobs (due_at);
   CREATE INDEX jobs_by_client ON jobs (client_id, due_at);
   CREATE TABLE request_log (
     client_id text COLLATE "C" NOT NULL,
     id bigint NOT NULL,
     at_ms bigint NOT NULL,
     operation_id text NOT NULL,
     status integer,
     entry jsonb NOT NULL,
     PRIMARY KEY (client_id, id)
   );`,
  `CREATE TABLE readiness_reports (client_id text COLLATE "C" PRIMARY KEY, version integer NOT NULL, state jsonb NOT NULL);`,
  // Jobs due at one time run in the order they were scheduled, as on the embedded store
  // (so a seeded sandbox numbers its AWBs the same way on both). The column comes without
  // a default first (no rewrite of the table under a lock); jobs from before have none
  // and come first.
  `CREATE SEQUENCE jobs_seq;
   ALTER TABLE jobs ADD COLUMN seq bigint;
   ALTER TABLE jobs ALTER COLUMN seq SET DEFAULT nextval('jobs_seq');`,
  // The clocks, shared by every replica ('' is the sandbox's own: its manual time, or its
  // real clock's pace), seeded from where earlier versions kept them (client settings, meta).
  `CREATE TABLE clocks (
     client_id text COLLATE "C" PRIMARY KEY,
     offset_ms bigint NOT NULL DEFAULT 0,
     now_ms bigint,
     sim_base_ms bigint,
     wall_base_ms bigint,
     speed double precision,
     previous_speed double precision,
     started_speed double precision,
     version integer NOT NULL DEFAULT 1
   );
   INSERT INTO clocks (client_id, offset_ms, now_ms)
     SELECT client_id, COALESCE((data #>> '{clock,offset_ms}')::numeric, 0)::bigint, (data #>> '{clock,now_ms}')::numeric::bigint
     FROM client_settings WHERE data ? 'clock';
   INSERT INTO clocks (client_id, now_ms) SELECT '', (value #>> '{}')::numeric::bigint FROM meta WHERE key = 'manual_clock_ms';`,
  // A readiness report's event log as rows of its own: a request adds an event without
  // reading and writing back the thousand before it. Events an older replica keeps in
  // the report's state are still read (and dropped as the log moves on).
  `CREATE TABLE report_events (
     client_id text COLLATE "C" NOT NULL,
     id bigserial NOT NULL,
     event jsonb NOT NULL,
     PRIMARY KEY (client_id, id)
   );
   INSERT INTO report_events (client_id, event)
     SELECT r.client_id, e.event FROM readiness_reports AS r, jsonb_array_elements(r.state->'events') WITH ORDINALITY AS e(event, n)
     ORDER BY r.client_id, e.n;
   UPDATE readiness_reports SET state = jsonb_set(state, '{events}', '[]'::jsonb) WHERE jsonb_array_length(state->'events') > 0;`,
  // A client's deliveries by status: each event of a client without a live endpoint
  // counts its held ones (the outbox bound), which otherwise read all its deliveries.
  { index: 'deliveries_by_status', on: 'deliveries (client_id, status)' },
  // An order's deliveries: the readiness report reads them at every tracking read, which
  // otherwise read every delivery of the client, a cost growing with its deliveries.
  { index: 'deliveries_by_order', on: 'deliveries (order_no)' },
  // A client's jobs of one kind in the order a claim takes them: a claim reads each
  // client's first due jobs of each kind from it, however many jobs of other kinds the
  // client has due, however many share one due time.
  { index: 'jobs_by_client_kind', on: 'jobs (client_id, kind, due_at, seq NULLS FIRST)' },
  // A readiness report's counts as rows of their own, one per client and item, which
  // replicas add to without reading (no version to contend on). Counts kept in the
  // report's state before (and by an older replica in a rolling upgrade) are read
  // together with them, so nothing is moved.
  `CREATE TABLE IF NOT EXISTS report_counts (
     client_id text COLLATE "C" NOT NULL,
     key text COLLATE "C" NOT NULL,
     n bigint NOT NULL,
     PRIMARY KEY (client_id, key)
   );`,
  // A readiness report row's birth: set when a replica creates the row, never changed
  // after, so that a replica keeping a client's marks at hand (while the row's version
  // shows no other writer) never takes a row removed and created again for the one it
  // kept. A row an older replica created gets one at its next change.
  `ALTER TABLE readiness_reports ADD COLUMN IF NOT EXISTS born text;`,
  // A job's versions, drawn from one sequence at every schedule of a job: a job cancelled
  // and scheduled again never takes back a version that a claim of the cancelled one may
  // hold (counted per row, it started again at 1). Above the counts rows kept before, and
  // 1,000 apart, so that a replica of the version before, which adds 1 to a row's version,
  // does not reach one the sequence draws next. It wraps after two million schedules, far
  // more than run while one claim is held.
  `CREATE SEQUENCE IF NOT EXISTS job_versions AS integer INCREMENT BY 1000 START 1000000 MINVALUE 1000000 CYCLE;`,
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Any fixed number: the advisory lock that keeps two replicas from migrating at once. */
export const MIGRATION_LOCK = 0x5a4e_d80c;

/** Raised when the database was migrated by a newer sandbox: this one must not start on it. */
export class NewerSchema extends Error {}

/** How long a start waits for the schema lock before it says so, and then how often. */
const LOCK_WAIT_TOLD_MS = [2_000, 30_000] as const;

/**
 * Brings the database to `SCHEMA_VERSION` under an advisory lock (replicas starting
 * together migrate once), each migration in its own transaction. A database of a newer
 * schema is refused with a message. A wait for the lock is told (`waiting`) and ended by
 * `signal`.
 */
export async function migrate(pool: Pool, { signal, waiting }: { signal?: AbortSignal; waiting?: (waitedMs: number) => void } = {}): Promise<{ from: number; to: number }> {
  // A connection of its own, without the pool's time limits: a migration of a big table
  // may take minutes, and cut short it would only be run again at the next start.
  const client = new pg.Client({ ...pool.options, pipeline: false, query_timeout: undefined, statement_timeout: undefined });
  // A database that stops during the migration fails the statement in flight (the start then fails); its 'error' event must not end the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    // Taken by trying again and again rather than by waiting in one statement: a session
    // waiting for the lock inside a statement would be one that CREATE INDEX CONCURRENTLY,
    // run by the holder, waits for in turn (a deadlock).
    const started = Date.now();
    let tellAt = LOCK_WAIT_TOLD_MS[0];
    while (!(await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1) AS got', [MIGRATION_LOCK])).rows[0]!.got) {
      signal?.throwIfAborted();
      const waited = Date.now() - started;
      if (waited >= tellAt) {
        waiting?.(waited);
        tellAt = waited + LOCK_WAIT_TOLD_MS[1];
      }
      await sleep(100, undefined, signal ? { signal } : {}).catch(() => undefined);
    }
    signal?.throwIfAborted();
    await client.query('CREATE TABLE IF NOT EXISTS sandbox_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM sandbox_schema');
    const from = rows[0]?.version ?? 0;
    if (from > SCHEMA_VERSION) {
      throw new NewerSchema(
        `The database has schema version ${from}, newer than this sandbox's ${SCHEMA_VERSION}: it was migrated by a newer sandbox. Start that version, or a new database.`,
      );
    }
    for (let version = from + 1; version <= SCHEMA_VERSION; version += 1) {
      const migration = MIGRATIONS[version - 1]!;
      if (typeof migration !== 'string') {
        await buildIndex(client, migration);
        await client.query('INSERT INTO sandbox_schema (version) VALUES ($1)', [version]);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration);
        await client.query('INSERT INTO sandbox_schema (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    }
    return { from, to: SCHEMA_VERSION };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/** Builds the index without holding writes; one left invalid by a build cut short is dropped and built again. */
async function buildIndex(client: pg.Client, { index, on }: IndexMigration): Promise<void> {
  const { rows } = await client.query<{ valid: boolean }>('SELECT i.indisvalid AS valid FROM pg_index AS i WHERE i.indexrelid = to_regclass($1)', [index]);
  if (rows[0]?.valid === false) await client.query(`DROP INDEX CONCURRENTLY ${index}`);
  await client.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index} ON ${on}`);
}
