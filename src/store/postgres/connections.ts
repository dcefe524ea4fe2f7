import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import type { Db } from './db.js';
import { domainMessages, Unavailable } from '../../shared/index.js';
import { FairGate, PermitTimeout } from './fair-gate.js';
import { LaneLimit } from './lane-limit.js';
import { connectionTimeoutOf, poolSizeOf, type PostgresOptions } from './options.js';
import { backgroundPool, counterPool, observationPool, probePool } from './pools.js';
import type { Reachability } from './reachability.js';
import type { RequestScopes } from './request-scope.js';
import { statement } from './statements.js';

/**
 * How many listings of one client a replica runs at once: a listing counts its client's
 * matching rows, the database's CPU, and more at once than the database has cores left
 * another client's short reads waiting behind them (bench/listing.ts on PostgreSQL).
 */
const HEAVY_PER_LANE = 2;

/**
 * A replica's connections to the database: the requests' pool behind its fair gate, and
 * the pools of background work, of counters and of observations (the journal, the
 * readiness reports), each apart so that its queue never holds up another's.
 */
export class Connections {
  /** Background work's connections (see backgroundPool). */
  readonly backgroundPool: pg.Pool;
  /** Counters' own connections (see counterPool). */
  readonly counterPool: pg.Pool;
  /** The journal's and the readiness reports' connections (see observationPool). */
  readonly observationPool: pg.Pool;
  /** The health check's connection (see probePool). */
  private readonly probePool: pg.Pool;
  /**
   * Permits to the connections of `pool` (one each), handed out in turns between clients:
   * pg-pool hands its connections to waiters first come first served, so a client's
   * request would wait behind all of another client's waiting statements, whatever turns
   * FairTurns had given it. A request waits in its client's lane (see RequestScopes), one
   * whose client is not known in a lane of its own, other work on `pool` in REPLICA_LANE.
   */
  readonly gate: FairGate;
  /** One client's statements over many rows (listings) that run at once on this replica (see LaneLimit). */
  private readonly heavyRuns = new LaneLimit(HEAVY_PER_LANE);
  /** Set while background work runs (see `background`). */
  private readonly lane = new AsyncLocalStorage<true>();

  constructor(
    /** The requests' own work (see requestPool). */
    readonly pool: pg.Pool,
    private readonly options: PostgresOptions,
    private readonly scopes: RequestScopes,
    private readonly reach: Reachability,
  ) {
    this.gate = new FairGate(poolSizeOf(options));
    this.backgroundPool = backgroundPool(options);
    this.counterPool = counterPool(options);
    this.observationPool = observationPool(options);
    this.probePool = probePool(options);
  }

  /** Asks the database for the smallest answer, on the health check's own connection. */
  readonly probe = async (): Promise<void> => {
    await this.probePool.query('SELECT 1');
  };

  get connectionTimeoutMs(): number {
    return connectionTimeoutOf(this.options);
  }

  /** Counter statements: committed at once, outside any unit of work (see PgCounters). */
  readonly counterDb: Db = {
    query: <R>(text: string, values?: unknown[]) => this.reach.run(() => this.counterPool.query(statement(text, values)) as unknown as Promise<{ rows: R[]; rowCount: number | null }>),
    scheduled: () => undefined,
  };

  /** Counter statements of the replica's own bookkeeping (the ranks' clock reads): their answers and failures say nothing to the health check. */
  readonly quietCounterDb: Db = {
    query: <R>(text: string, values?: unknown[]) => this.counterPool.query(statement(text, values)) as unknown as Promise<{ rows: R[]; rowCount: number | null }>,
    scheduled: () => undefined,
  };

  /** The journal's and the readiness reports' statements, committed at once. */
  readonly observationDb: Db = {
    query: <R>(text: string, values?: unknown[]) => this.reach.run(() => this.observationPool.query(statement(text, values)) as unknown as Promise<{ rows: R[]; rowCount: number | null }>),
    scheduled: () => undefined,
  };

  /** Runs `fn` as background work: its statements go to the background pool. */
  readonly background = <T>(fn: () => Promise<T>): Promise<T> => this.lane.run(true, fn);

  /** The pool of the work running now: background work's own, or the requests'. */
  get own(): pg.Pool {
    return this.lane.getStore() ? this.backgroundPool : this.pool;
  }

  /** The lane the work running now waits in at the gate (see `permit`). */
  get gateLane(): string {
    return this.scopes.lane;
  }

  /**
   * A permit of the gate when the work running now takes a connection of `pool` (none
   * for background work, on a pool of its own). The wait in the gate is the wait for a
   * connection, bounded by the same connectionTimeoutMs, and times out with pg-pool's
   * error (see Reachability.translate); with a permit, `pool` has a connection free or
   * room to open one.
   */
  async permit(): Promise<() => void> {
    if (this.own !== this.pool) return () => undefined;
    return this.gate.acquire(this.scopes.lane, this.connectionTimeoutMs);
  }

  /**
   * Runs `fn`, statements over many rows, in its lane's turn of those (see Db.heavy). A
   * turn not come within connectionTimeoutMs is a 503, as a connection not come is: the
   * client's own listings hold it, not an outage. A request whose client hung up while
   * it waited does not run them (its scope's stillWanted throws).
   */
  readonly heavy = <T>(fn: () => Promise<T>): Promise<T> =>
    this.heavyRuns.run(this.scopes.lane, () => (this.scopes.stillWanted(), fn()), this.connectionTimeoutMs).catch((error: unknown) => {
      throw error instanceof PermitTimeout ? new Unavailable(domainMessages.listingsBusy(this.connectionTimeoutMs, HEAVY_PER_LANE)) : error;
    });

  /** Ends every pool, the requests' last. */
  async end(): Promise<void> {
    await this.probePool.end();
    await this.counterPool.end();
    await this.observationPool.end();
    await this.backgroundPool.end();
    await this.pool.end();
  }
}
