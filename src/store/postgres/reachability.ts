import { domainMessages, Unavailable } from '../../shared/index.js';
import type { StorageHealth } from '../port.js';
import { PermitTimeout } from './fair-gate.js';
import { connectionTimeoutOf, type PostgresOptions } from './options.js';
import { PROBE_TIMEOUT_MS } from './pools.js';

/**
 * How fresh health's view of the database is kept: when no statement of this replica was
 * answered for this long, the database is asked (see watch).
 */
const PROBE_EVERY_MS = 1_000;

/** During a confirmed outage, how often a call still goes to the database (see Reachability.run). */
const TRIAL_EVERY_MS = 1_000;

/**
 * Errors of a database that answers but refuses writes: read-only (a standby after a
 * failover, `default_transaction_read_only`), or its disk full.
 */
const WRITES_REFUSED_CODES = new Set(['25006', '53100']);
/**
 * How long health keeps a refused write while reads are answered and no write is taken
 * (wall ms): every read would otherwise say `ok` between the failed writes.
 */
const WRITES_REFUSED_KEPT_MS = 30_000;

/** Errors that mean the database cannot be reached or cannot take writes now: a 503, not a 500. */
const UNAVAILABLE_CODES = new Set(['57014', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53100', '53200', '53300', '08000', '08003', '08006', '25006']);

/** Failures of one statement that a database which answers others gives (see PostgresOptions.onStatementFailure), with what they mean. */
const STATEMENT_FAILURES: Record<string, string> = {
  '57014': 'a statement timeout: a lock held by another session, or a query slower than the timeout',
  '53200': 'the database out of memory',
};

/** Whether a statement's result is of one that changed rows on its own (outside a unit of work): a write taken. One that matched none wrote nothing. */
const wroteBy = (result: unknown): boolean => {
  const { command, rowCount } = (result ?? {}) as { command?: unknown; rowCount?: unknown };
  return typeof rowCount === 'number' && rowCount > 0 && /^(INSERT|UPDATE|DELETE|MERGE)$/.test(String(command));
};

/** The SQLSTATE (or Node's error code) of a failure. */
export const codeOf = (error: unknown): string | undefined => (error as { code?: string } | undefined)?.code;
/**
 * pg-pool's error when every connection of a pool stayed busy for the whole wait, or the
 * request pool's gate's (with pg-pool's message): load, not a failing database.
 */
const isPoolBusy = (error: unknown): boolean => error instanceof PermitTimeout || (error as Error)?.message === 'timeout exceeded when trying to connect';
/** Whether `error` means the database cannot be reached or cannot take work now (rather than a fault of the statement). */
export const isUnavailable = (error: unknown): boolean =>
  UNAVAILABLE_CODES.has(codeOf(error) ?? '') ||
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/i.test((error as Error)?.message ?? '');

/**
 * Whether the database answers this replica: every call to it goes through `run`, which
 * turns "cannot reach the database" into Unavailable (a 503 with Retry-After) and keeps
 * what the storage's health reports. An idle replica learns it from `watch`, which asks
 * the database itself whenever nothing else did for a while: health knows of an outage,
 * and of its end, within seconds even with no traffic.
 */
export class Reachability {
  /** The outage health shows; `refusedAt`: its latest failure was a refused write (performance.now()). */
  private failure: { error: string; since: number; refusedAt?: number } | undefined;
  /** When the database last answered a statement of this replica (performance.now()). */
  private answeredAt = -Infinity;
  /** Waits for a connection that timed out with the replica busy (see translate), since start. */
  private busyWaits = 0;

  private probing = false;
  /** True while the outage is one the health check's own probe met too (not one connection's passing failure). */
  private probeConfirmed = false;
  /** When a call last went to the database during a confirmed outage (see run). */
  private lastTrial = -Infinity;
  private watcher: NodeJS.Timeout | undefined;
  /**
   * Whether this outage was told (onHealth): one the probe confirmed, or a refused write.
   * One statement's passing failure (a statement timeout, a reset connection) that the
   * next answer ends is not told: under load those come and go many times a second.
   */
  private told = false;

  constructor(private readonly options: PostgresOptions) {}

  /**
   * Keeps health current: every PROBE_EVERY_MS, unless a statement of this replica was
   * answered meanwhile (which says as much), runs `probe` (a `SELECT 1` on a connection
   * of its own, with a short timeout). Its failure is an outage, with its code; its answer
   * ends one. Stopped by `stop`.
   */
  watch(probe: () => Promise<void>): void {
    this.watcher ??= setInterval(() => {
      if (this.probing || performance.now() - this.answeredAt < PROBE_EVERY_MS) return;
      this.probing = true;
      probe()
        .then(
          () => this.answered(),
          (error: unknown) => this.probeFailed(error),
        )
        .finally(() => (this.probing = false));
    }, PROBE_EVERY_MS).unref();
  }

  /** Stops `watch`'s checks. */
  stop(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
  }

  private get connectionTimeoutMs(): number {
    return connectionTimeoutOf(this.options);
  }

  /**
   * Runs a database call, turning "cannot reach the database" into Unavailable (a 503
   * with Retry-After). `answered`: the call's success is the database answering; `local`:
   * it does not go to the database at all.
   */
  async run<R>(call: () => Promise<R>, answered = true, local = false): Promise<R> {
    // An outage the probe confirmed is answered at once, not after each call's own timeout
    // (a database that hangs would hold every request 5 to 15 s before its 503), but for
    // one call a second, which goes to the database: a database too slow for the probe's
    // short timeout still serves it, and its answer ends the outage, as the probe's would.
    // A `local` call (a permit of the replica's own gate) reaches no database: it neither
    // waits on the outage nor spends the second's call.
    if (this.probeConfirmed && this.failure && !local) {
      const now = performance.now();
      if (now - this.lastTrial < TRIAL_EVERY_MS) throw this.outage(this.failure.error);
      this.lastTrial = now;
    }
    try {
      const result = await call();
      // Whether the statement wrote matters only while a refused write is kept.
      if (answered) this.answered(this.failure?.refusedAt !== undefined && wroteBy(result));
      return result;
    } catch (error) {
      throw this.translate(error);
    }
  }

  /**
   * The database answered a statement: it is reachable. A refused write stays in health
   * until a write is taken (`wrote`: a commit, or a statement that changed rows on its
   * own) or WRITES_REFUSED_KEPT_MS have passed without another; a read says nothing of it.
   */
  answered(wrote = false): void {
    const failure = this.failure;
    const refusedAt = failure?.refusedAt;
    if (failure && (wrote || refusedAt === undefined || performance.now() - refusedAt >= WRITES_REFUSED_KEPT_MS)) {
      this.failure = undefined;
      if (this.told) this.options.onHealth?.({ ok: true, error: failure.error, since: failure.since });
      this.told = false;
    }
    this.probeConfirmed = false;
    this.answeredAt = performance.now();
  }

  translate(error: unknown): unknown {
    if (error instanceof Unavailable || !isUnavailable(error)) return error;
    // Every connection of a pool stayed busy for the whole wait. The replica is busy, not
    // the database failing, when the database answered a statement of this replica during
    // the wait: a 503 to retry, but health says nothing of it. Otherwise (a pool full of
    // connections that hang or are still connecting) it is an outage like any other.
    if (isPoolBusy(error) && performance.now() - this.answeredAt < this.connectionTimeoutMs) {
      this.busyWaits += 1;
      return new Unavailable(domainMessages.storeBusy(this.connectionTimeoutMs));
    }
    const code = codeOf(error) ?? 'ECONNECTION';
    this.failed(code);
    const meaning = STATEMENT_FAILURES[code];
    if (meaning !== undefined) this.options.onStatementFailure?.(code, meaning);
    return this.outage(code);
  }

  /** The 503 of an outage: saving (or, for a request that only reads, reading) is not possible now. */
  private outage(code: string): Unavailable {
    const reason = `the database: ${code}`;
    return new Unavailable(domainMessages.storeUnavailable(reason), undefined, domainMessages.storeUnreadable(reason));
  }

  /** The database failed now with `code`: health shows this code (the latest), and the outage's start (the first). */
  private failed(code: string, confirmed = WRITES_REFUSED_CODES.has(code)): void {
    // A refused write stays kept through other failures after it (a statement timeout on a standby under load).
    const refusedAt = WRITES_REFUSED_CODES.has(code) ? performance.now() : this.failure?.refusedAt;
    this.failure = { error: code, since: this.failure?.since ?? Date.now(), ...(refusedAt !== undefined ? { refusedAt } : {}) };
    if (!confirmed || this.told) return;
    this.told = true;
    this.options.onHealth?.({ ok: false, error: code, since: this.failure.since });
  }

  private probeFailed(error: unknown): void {
    // A probe that timed out while other statements of this replica were answered meanwhile: load, not an outage.
    if (performance.now() - this.answeredAt < PROBE_EVERY_MS + PROBE_TIMEOUT_MS) return;
    this.failed(codeOf(error) ?? 'ECONNECTION', true);
    this.probeConfirmed = true;
  }

  health(): StorageHealth {
    const busy = this.busyWaits > 0 ? { busyWaits: this.busyWaits } : {};
    return this.failure ? { writable: false, error: this.failure.error, since: this.failure.since, ...busy } : { writable: true, ...busy };
  }
}
