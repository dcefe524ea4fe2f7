import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { EmbeddedStorage, writeWarnings } from './embedded/index.js';
import { cannotReachDatabase, databaseErrorCode, PostgresStorage, type PostgresOptions } from './postgres/index.js';
import { backgroundFailures, firstOfWindow, formatDuration, shownDatabase, Unavailable } from '../shared/index.js';
import type { Storage } from './port.js';
import type { StoreFileSystem } from './embedded/index.js';

/** What picks and opens the storage: `--data`, `--fsync`, `--salvage-journal`, `--journal-size`, `--database-url`, `--database-wait`. */
export interface StorageOptions {
  data: string;
  fsync: boolean;
  salvageJournal?: boolean;
  journalSize: number;
  databaseUrl: string | undefined;
  /** PostgreSQL: how long the start waits for a database it cannot reach yet (ms). */
  databaseWait?: number;
}

/**
 * SQLSTATEs of a database that answered and refused this connection: a wrong user or
 * password (class 28, invalid authorization), a database of that name missing (3D000).
 */
const REFUSED = /^(28...|3D000)$/;

/**
 * The error a start ends with when the database refused the connection: pg's message names
 * neither the database nor the option to mend, which this one does (the password masked).
 * Any other failure is passed on as it is.
 */
function refusal(error: unknown, url: string): unknown {
  if (!REFUSED.test(databaseErrorCode(error) ?? '')) return error;
  return new Error(`The database at ${shownDatabase(url)} refused the connection: ${(error as Error).message}. Check --database-url (SANDBOX_DATABASE_URL).`, { cause: error });
}

/** The pauses between tries of the first connection: growing, at most the last. */
const RETRY_PAUSES_MS = [250, 500, 1_000, 2_000, 5_000];

/**
 * Opens the PostgreSQL storage, trying again while the database cannot be reached (not
 * started yet, starting, its host not resolvable yet) for up to `waitMs`, with a growing
 * pause and a log line per try: replicas and their database are often started together.
 * A failure of another kind (a wrong password, a newer schema) ends the start at once (a
 * refusal naming the database, see `refusal`); a wait that runs out ends it with a
 * message that says so.
 */
async function openPostgres(options: PostgresOptions, waitMs: number, logger: Logger, signal: AbortSignal | undefined): Promise<PostgresStorage> {
  const started = Date.now();
  for (let attempt = 1; ; attempt += 1) {
    signal?.throwIfAborted();
    try {
      return await PostgresStorage.open(options);
    } catch (error) {
      if (!cannotReachDatabase(error)) throw refusal(error, options.url);
      const waited = Date.now() - started;
      const pause = Math.min(RETRY_PAUSES_MS[Math.min(attempt - 1, RETRY_PAUSES_MS.length - 1)]!, waitMs - waited);
      const reason = `${databaseErrorCode(error) ?? 'no connection'}: ${error instanceof Error ? error.message : String(error)}`;
      if (pause <= 0) {
        throw new Error(
          `The database could not be reached within ${formatDuration(waitMs)} (--database-wait), ${attempt} ${attempt === 1 ? 'try' : 'tries'}; the last failed with ${reason}. Start the database or check --database-url; the wait can be made longer with --database-wait.`,
          { cause: error },
        );
      }
      logger.warn({ attempt, code: databaseErrorCode(error), waited_ms: waited, retry_in_ms: pause }, `the database cannot be reached yet (${reason}); trying again in ${formatDuration(pause)}`);
      await sleep(pause, undefined, { signal }).catch(() => undefined);
    }
  }
}

/**
 * Logs the errors of the database's connections that no statement was waiting on (an idle
 * pooled connection, a LISTEN connection). One the database's absence explains (a stop, a
 * restart, a network gone) is expected in an outage, which health already shows, and the
 * connection is made again when next needed: a warning without a stack, the first at once and
 * the rest of the minute counted in one more. Any other is an error with its stack.
 */
export function connectionErrors(logger: Logger): (error: unknown) => void {
  const failed = backgroundFailures(logger);
  return (error) => {
    if (!cannotReachDatabase(error)) {
      logger.error({ err: error }, 'database connection failed');
      return;
    }
    const reason = `${databaseErrorCode(error) ?? 'no connection'}: ${error instanceof Error ? error.message : String(error)}`;
    failed('database connection', new Unavailable(reason), 'a connection was dropped (it is made again when needed)');
  };
}

/** How long the statement failures after a logged one are counted into one more line. */
const STATEMENT_WINDOW_MS = 60_000;

/**
 * Logs the statements the database failed while it answered others (a lock held past the
 * statement timeout), which health's own check does not meet: the first at once, with what
 * its code means, and those of the minute after it counted in one more line.
 */
export function statementFailures(logger: Pick<Logger, 'warn'>, windowMs = STATEMENT_WINDOW_MS): (code: string, meaning: string) => void {
  const opens = firstOfWindow(windowMs, (_kind, held, _clients, opened) => logger.warn({ failures: held, first_at: new Date(opened).toISOString() }, `${held} more database statements failed in the minute after the first`));
  return (code, meaning) => {
    if (opens('statement')) logger.warn({ error: code }, `a database statement failed (${code}, ${meaning}): a request it was for answered 503; background work tries again later`);
  };
}

/**
 * Opens the storage the options name: PostgreSQL with `--database-url`, else the
 * embedded store on `--data` (a file, or `:memory:`). An abort of `signal` ends the wait
 * for the database or the journal's replay: the open throws its reason, the lock given back.
 */
export function openStorage(options: StorageOptions, logger: Logger, fileSystem?: StoreFileSystem, signal?: AbortSignal): Promise<Storage> {
  if (options.databaseUrl !== undefined) {
    const postgres: PostgresOptions = {
      url: options.databaseUrl,
      requestLogSize: options.journalSize,
      onError: connectionErrors(logger),
      onStatementFailure: statementFailures(logger),
      ...(signal ? { signal } : {}),
      onMigrationWait: (waited) =>
        logger.warn({ waited_ms: waited }, `waiting ${formatDuration(waited)} for the schema lock: another replica is migrating the database (this start goes on once it is done; a stop signal ends the wait)`),
      onMigrated: (from, to) => logger.info({ from_schema: from, to_schema: to }, `migrated the database from schema version ${from} to ${to}`),
      onHealth: ({ ok, error, since }) =>
        ok
          ? logger.info({ error, since: new Date(since).toISOString(), lasted_ms: Date.now() - since }, `the database is reachable again after ${formatDuration(Date.now() - since)}: health is ok`)
          : logger.warn({ error, since: new Date(since).toISOString() }, `the database is unavailable (${error}): health is degraded, and requests that need it answer 503 until it is back`),
    };
    return openPostgres(postgres, options.databaseWait ?? 0, logger, signal);
  }
  return EmbeddedStorage.open({
    path: options.data,
    fsync: options.fsync,
    salvageJournal: options.salvageJournal === true,
    onSalvage: (salvage) =>
      logger.warn(
        { folder: salvage.folder, damage: salvage.damage, moved: salvage.moved, from_line: salvage.fromLine },
        `the journal was damaged (${salvage.damage}): started from what was intact; set aside ${salvage.moved.join(', ') || 'nothing'} into ${salvage.folder}` +
          (salvage.fromLine > 0 ? `, their commits from line ${salvage.fromLine} of the first on lost` : ', their commits lost'),
      ),
    onTornTail: ({ path, end, size }) =>
      logger.warn(
        { journal: path, kept_bytes: end, dropped_bytes: size - end },
        `the journal ${path} ended in a line cut short: its last ${size - end} bytes dropped (a write a crash or a full disk cut off is never acknowledged; ` +
          'if the file was copied from a running sandbox or cut by other means, acknowledged changes after it may be missing: restore it from a copy taken while the sandbox was stopped)',
      ),
    onLockTakenOver: ({ pid, host, since }) =>
      logger.warn(
        { data: options.data, holder_pid: pid, holder_host: host, holder_since: since },
        `took over the lock of the data file from pid ${pid} on host ${host} (held since ${since}), whose sandbox no longer runs (it was killed, or its machine or container restarted); ` +
          'what it acknowledged is in the journal, replayed now',
      ),
    onMigrated: (from, to) =>
      logger.info({ data: options.data, from_schema: from, to_schema: to }, `the data file was of schema version ${from}: migrated to ${to} and written back (the sandbox that wrote it cannot use it now: keep a copy of the old file to go back)`),
    requestLogSize: options.journalSize,
    ...(fileSystem ? { fileSystem } : {}),
    ...(signal ? { signal } : {}),
    onError: (error) => logger.error({ err: error }, `store write failed: ${error.message}`),
    ...writeWarnings(logger),
  });
}

/**
 * Ends a start that failed once `openStorage` had opened the store (a start-time write the disk refused, say) and returns the
 * error to tell. The embedded store writes nothing more, leaves its files as the start found them and gives its lock back; a
 * journal append that failed becomes a start message naming the segment and what to do. PostgreSQL closes its connections.
 *
 * @example
 * const storage = await openStorage(options, logger);
 * try { await loadClocks(storage, options, ids); } catch (error) { throw await closeRefusedStart(storage, error); }
 */
export async function closeRefusedStart(storage: Storage, error: unknown): Promise<unknown> {
  if (storage instanceof EmbeddedStorage) return storage.refuseStart(error);
  await storage.close().catch(() => undefined);
  return error;
}
