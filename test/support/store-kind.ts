import pg from 'pg';
import { inject } from 'vitest';

/**
 * Which store this run's sandboxes are on. `npm test` runs the suites on the embedded
 * store; `npm run test:postgres` runs the API, webhook, crash, isolation, roles and
 * clock suites again on PostgreSQL (test/postgres/vitest.config.ts), one database per
 * sandbox on one real server.
 */
const server: string = (() => {
  try {
    return inject('postgresServer') ?? '';
  } catch {
    return ''; // not under vitest's runner (a script)
  }
})();

export const onPostgres = server !== '';
export const storeKind: 'embedded' | 'postgres' = onPostgres ? 'postgres' : 'embedded';

let n = 0;
/** The database of each data file a test names: reopening "the same data" reopens the same database. */
const byData = new Map<string, string>();

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function createDatabase(): Promise<string> {
  n += 1;
  const name = `t_${process.pid}_${n}`;
  // Copied from the template the run's global set-up migrated (test/postgres/global-setup.ts).
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE sandbox_template`));
  return `${server}/${name}`;
}

/** Databases of closed sandboxes, emptied, for the next sandbox of this worker (a new one takes ~100-300 ms). */
const free: string[] = [];

/**
 * The PostgreSQL database that stands for `data` (a data file path; `:memory:` or
 * none: an empty database, `temporary`, to give back with `releaseDatabase` when its
 * sandbox has closed).
 */
export async function databaseFor(data: string | undefined): Promise<{ url: string; temporary: boolean }> {
  if (data === undefined || data === ':memory:') return { url: free.pop() ?? (await createDatabase()), temporary: true };
  let url = byData.get(data);
  if (url === undefined) {
    url = await createDatabase();
    byData.set(data, url);
  }
  return { url, temporary: false };
}

/**
 * Empties a temporary database, as a new copy of the migrated template would be (every
 * table but the schema's version, every sequence restarted), and keeps it for the next
 * sandbox. Its sandbox must have closed its connections.
 */
export async function releaseDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(`SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'sandbox_schema'`);
    const { rows: sequences } = await client.query<{ name: string }>(`SELECT quote_ident(sequencename) AS name FROM pg_sequences WHERE schemaname = 'public'`);
    await client.query(`TRUNCATE ${tables.map((t) => t.name).join(', ')}`);
    for (const { name } of sequences) await client.query(`ALTER SEQUENCE ${name} RESTART`);
  } finally {
    await client.end();
  }
  free.push(url);
}
