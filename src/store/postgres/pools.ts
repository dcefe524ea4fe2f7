import pg from 'pg';
import { connectionTimeoutOf, poolSizeOf, type PostgresOptions } from './options.js';

/**
 * Connections of a replica's background work (jobs, webhook attempts), apart from the
 * requests' pool, so that a claim of many due jobs never queues ahead of requests for
 * the requests' connections.
 */
const BACKGROUND_CONNECTIONS = 6;

/**
 * A pool of connections to the database. Waits are bounded: a database that hangs (not
 * merely refuses) answers 503 after seconds, never holds a request for good. A connection
 * that the server drops must not crash the process: the next query reconnects.
 */
function poolOf(options: PostgresOptions, config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ connectionString: options.url, connectionTimeoutMillis: connectionTimeoutOf(options), query_timeout: 15_000, statement_timeout: 10_000, ...config });
  // An idle connection's failure reaches the pool's 'error' (pg-pool drops the connection).
  pool.on('error', (error) => options.onError?.(error));
  pool.on('connect', keepErrorsHandled);
  return pool;
}

/**
 * A connection's own 'error' listener for the whole of its life. pg-pool listens on a
 * connection only while it is idle: one checked out (inside a unit of work, between two
 * of its statements) that the server ends, as a stopping database does to every session,
 * emits 'error' with nobody listening, which would end the process. The failure itself is
 * not lost: the statement in flight, or the next one on that connection, fails with it and
 * its caller answers 503 or tries the job again later; the pool drops the connection when
 * it is released.
 */
export function keepErrorsHandled(client: pg.Client): void {
  client.on('error', () => undefined);
}

/** The requests' own work. Pipelined: a unit of work sends its held-back writes ahead of the statement it waits for (see inOneTrip). */
export const requestPool = (options: PostgresOptions): pg.Pool => poolOf(options, { max: poolSizeOf(options), pipeline: true });

/** Background work's connections (see BACKGROUND_CONNECTIONS). */
export const backgroundPool = (options: PostgresOptions): pg.Pool => poolOf(options, { max: BACKGROUND_CONNECTIONS, pipeline: true });

/**
 * Counters' own connections: a unit holding a connection of the requests' pool never
 * waits for another of it. A counter's commit need not wait for its WAL flush: a record
 * that uses the number commits synchronously later, which flushes the WAL up to it, the
 * counter's change included. So a number in a kept record is never handed out again, and
 * the counter row is locked for its update alone, not a flush (every create takes two).
 */
export const counterPool = (options: PostgresOptions): pg.Pool => poolOf(options, { max: 2, options: '-c synchronous_commit=off' });

/**
 * The request journal's and the readiness reports' connections: written after the
 * answer, committed without waiting for the WAL flush (a database crash may lose the
 * last moments of them, never an order or a delivery), and apart from the pool of the
 * requests' own work, so their queue never holds a create up.
 */
export const observationPool = (options: PostgresOptions): pg.Pool => poolOf(options, { max: 4, options: '-c synchronous_commit=off' });

/** How long the health check waits for the database to connect and answer (see Reachability.watch). */
export const PROBE_TIMEOUT_MS = 1_000;

/**
 * The health check's one connection: apart from every other pool, so a replica busy with
 * requests or jobs still asks the database at once, and with a short wait, so a database
 * that hangs shows in health within seconds.
 */
export const probePool = (options: PostgresOptions): pg.Pool =>
  poolOf(options, { max: 1, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS, statement_timeout: PROBE_TIMEOUT_MS });

/** The replicas' signals' pool (see PgSignals): two connections, each a pg_notify at a time. */
export const signalPool = (options: PostgresOptions): pg.Pool => poolOf(options, { max: 2 });

/**
 * A connection of its own that LISTENs (KeptListen): kept alive at the TCP
 * level (it only reads, and a database gone without a word would otherwise never show),
 * its connect and its statements bounded.
 */
export const listeningClient = (options: PostgresOptions): pg.Client =>
  new pg.Client({ connectionString: options.url, keepAlive: true, connectionTimeoutMillis: connectionTimeoutOf(options), statement_timeout: 10_000, query_timeout: 15_000 });
