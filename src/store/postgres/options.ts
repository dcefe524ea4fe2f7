/** How the PostgreSQL adapter connects (the CLI's --database-url and its neighbours). */
export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Most request-journal entries kept per client. */
  requestLogSize: number;
  /** Connections of this replica's pool. Default 10. */
  poolSize?: number;
  /**
   * How long a connection is waited for, a new one or, with all of a pool's connections
   * busy, a free one; then the request answers 503. Default 5,000 ms.
   */
  connectionTimeoutMs?: number;
  /** Told about failures no caller sees (a dropped LISTEN connection). */
  onError?: (error: unknown) => void;
  /** Ends the start's wait for the schema lock (another replica migrating): the open throws its reason. */
  signal?: AbortSignal;
  /** Told while the start waits for the schema lock: how long it has waited (ms), after 2 s and then every 30 s. */
  onMigrationWait?: (waitedMs: number) => void;
  /**
   * Told when an outage the health check confirmed (or a refused write) begins (`ok`
   * false, with its code then) and when it ends (`ok` true, with the code it last had and
   * when it began); not of one statement's passing failure.
   */
  onHealth?: (change: { ok: boolean; error: string; since: number }) => void;
  /**
   * Told of a statement the database failed on its own while it answers others (a
   * statement timeout: a lock held, a query too slow), which health's check does not see:
   * its code, and what it means.
   */
  onStatementFailure?: (code: string, meaning: string) => void;
  /** Told once this start migrated the database (from, to: schema versions). */
  onMigrated?: (from: number, to: number) => void;
}

/** PostgresOptions.poolSize, 10 by default. */
export const poolSizeOf = (options: PostgresOptions): number => options.poolSize ?? 10;
/**
 * The longest wait between tries to listen again (LISTEN/NOTIFY) after the connection
 * dropped: one connection's tries, cheap, and what a replica misses until it listens again
 * (another replica's listener hand-offs, job announcements) waits for the slower paths
 * (the 5 s look for due jobs, a held delivery's resume) meanwhile.
 */
export const RELISTEN_MAX_MS = 2_000;

/** PostgresOptions.connectionTimeoutMs, 5,000 ms by default. */
export const connectionTimeoutOf = (options: PostgresOptions): number => options.connectionTimeoutMs ?? 5_000;

/** Refuses a connectionTimeoutMs that is not a positive number of milliseconds. */
export function checkOptions(options: PostgresOptions): void {
  const timeout = options.connectionTimeoutMs;
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) throw new RangeError(`connectionTimeoutMs must be a positive number of milliseconds, not ${timeout}.`);
}
