import type { Connections } from './connections.js';
import { REPLICA_LANE, type RequestScopes } from './request-scope.js';

/** The channel replicas are told on when a job is scheduled: its due time. */
export const JOBS_CHANNEL = 'sandbox_jobs';
/** How long scheduled jobs are gathered before one NOTIFY tells the other replicas of them all (ms). */
const NOTICE_MS = 20;

/** Each client's earliest due time among scheduled jobs. */
function earliestPerClient(jobs: Array<[number, string]>): Map<string, number> {
  const earliest = new Map<string, number>();
  for (const [dueAt, clientId] of jobs) earliest.set(clientId, Math.min(dueAt, earliest.get(clientId) ?? Infinity));
  return earliest;
}

/**
 * News of scheduled jobs, so every replica's scheduler wakes for a job that falls due
 * earlier than it waits for. This replica's listeners are told at once, the other
 * replicas within NOTICE_MS in one NOTIFY for every job scheduled meanwhile (each
 * client's earliest due time): a NOTIFY takes a lock that every committing NOTIFY of the
 * database waits for, and one per create would put all creates of all replicas in one queue.
 */
export class JobNotices {
  private readonly listeners: Array<(dueAt: number, clientId: string) => void> = [];
  /** Jobs scheduled since the last NOTIFY: each client's earliest due time. */
  private readonly unannounced = new Map<string, number>();
  private noticeTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly connections: Connections,
    private readonly scopes: RequestScopes,
  ) {}

  /** `listener` is told of every job scheduled, by this replica or another. */
  subscribe(listener: (dueAt: number, clientId: string) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Tells the listeners (the scheduler) and, shortly, the other replicas of jobs just
   * scheduled. Outside the request scope: the timers the scheduler arms here would carry
   * the request's lane, and its wake-ups (clock reads, the next due time) would wait in
   * that client's turns at the gate, behind a flooding client's backlog.
   */
  announce(jobs: Array<[number, string]>): void {
    if (jobs.length === 0) return;
    if (this.scopes.current.getStore() !== undefined) {
      this.scopes.current.exit(() => this.announce(jobs));
      return;
    }
    for (const [clientId, dueAt] of earliestPerClient(jobs)) {
      for (const listener of this.listeners) listener(dueAt, clientId);
      this.unannounced.set(clientId, Math.min(dueAt, this.unannounced.get(clientId) ?? Infinity));
    }
    this.noticeTimer ??= setTimeout(() => this.notifyOthers(), NOTICE_MS).unref();
  }

  /** Another replica's NOTIFY on JOBS_CHANNEL (`[clientId, dueAt]` pairs): tells this replica's listeners. */
  received(payload: string | undefined): void {
    let jobs: unknown;
    try {
      jobs = JSON.parse(payload ?? '[]');
    } catch {
      return;
    }
    if (!Array.isArray(jobs)) return;
    for (const entry of jobs) {
      const [clientId, dueAt] = entry as [unknown, unknown];
      if (typeof clientId === 'string' && typeof dueAt === 'number') for (const listener of this.listeners) listener(dueAt, clientId);
    }
  }

  /** Tells the other replicas what this one scheduled last, then sends no more. */
  close(): void {
    if (this.noticeTimer) {
      clearTimeout(this.noticeTimer);
      this.notifyOthers();
    }
    this.closed = true;
  }

  private notifyOthers(): void {
    this.noticeTimer = undefined;
    const payload = JSON.stringify([...this.unannounced]);
    this.unannounced.clear();
    // NOTIFY payloads are limited to 8000 bytes; past that the others learn it at their next wake-up.
    if (!this.closed && payload.length < 7_900) {
      const { gate, pool, connectionTimeoutMs } = this.connections;
      void gate.run(REPLICA_LANE, connectionTimeoutMs, () => pool.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, payload])).catch(() => undefined);
    }
  }
}
