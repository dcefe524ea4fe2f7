import type pg from 'pg';
import type { Signals } from '../port.js';
import { KeptListen } from './kept-listen.js';
import type { PostgresOptions } from './options.js';
import { signalPool } from './pools.js';

/** Channels replicas signal each other on; a channel is a PostgreSQL identifier, so only these names. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Short messages between the replicas of one database (LISTEN/NOTIFY), for work that
 * must reach the replica holding something in memory (a listener's WebSocket). A
 * connection of its own listens (taken at the first subscribe, listened again after a
 * drop); each publish is one `pg_notify` through a small pool of its own. Payloads stay
 * under NOTIFY's 8000 bytes: the caller sends ids, not bodies.
 */
export class PgSignals implements Signals {
  private readonly pool: pg.Pool;
  private readonly handlers = new Map<string, Array<(payload: string) => void>>();
  /** Listens on the channels subscribed to (taken at the first subscribe). */
  private readonly kept: KeptListen;
  private closed = false;

  constructor(
    options: PostgresOptions,
    /** Turns "cannot reach the database" into the store's Unavailable, as every other call to it is (see Reachability.translate). */
    private readonly translate: (error: unknown) => unknown = (error) => error,
  ) {
    // Built like every other pool: bounded waits, and each connection's errors handled for its whole life.
    this.pool = signalPool(options);
    this.kept = new KeptListen(options, () => this.handlers.keys(), (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
  }

  async publish(channel: string, payload: string): Promise<void> {
    if (!CHANNEL.test(channel)) throw new RangeError(`not a channel name: ${channel}`);
    if (this.closed) return;
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]).catch(this.rethrow);
  }

  async subscribe(channel: string, handler: (payload: string) => void): Promise<void> {
    if (!CHANNEL.test(channel)) throw new RangeError(`not a channel name: ${channel}`);
    const list = this.handlers.get(channel) ?? [];
    list.push(handler);
    this.handlers.set(channel, list);
    await this.kept.listen().catch(this.rethrow);
    // A connection made before this channel was subscribed to listens on it from now on (LISTEN twice is harmless).
    if (list.length === 1) await this.kept.add(channel).catch(this.rethrow);
  }

  /** A failure of the database's, as the caller's logs and answers take it: an outage is the store's Unavailable (a warning, not a fault). */
  private readonly rethrow = (error: unknown): never => {
    throw this.translate(error);
  };

  async close(): Promise<void> {
    this.closed = true;
    await this.kept.end();
    await this.pool.end().catch(() => undefined);
  }
}
