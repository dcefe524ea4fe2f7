import pg from 'pg';
import type { Signals } from '../port.js';
import { RELISTEN_MAX_MS, type PostgresOptions } from './options.js';
import { listeningClient, signalPool } from './pools.js';

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
  private listener: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: PostgresOptions) {
    // Built like every other pool: bounded waits, and each connection's errors handled for its whole life.
    this.pool = signalPool(options);
  }

  async publish(channel: string, payload: string): Promise<void> {
    if (!CHANNEL.test(channel)) throw new RangeError(`not a channel name: ${channel}`);
    if (this.closed) return;
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  async subscribe(channel: string, handler: (payload: string) => void): Promise<void> {
    if (!CHANNEL.test(channel)) throw new RangeError(`not a channel name: ${channel}`);
    const list = this.handlers.get(channel) ?? [];
    list.push(handler);
    this.handlers.set(channel, list);
    await this.listen();
    if (list.length === 1) await this.listener?.query(`LISTEN ${channel}`);
  }

  private listen(): Promise<void> {
    if (this.listener || this.closed) return Promise.resolve();
    return (this.connecting ??= (async () => {
      const client = listeningClient(this.options);
      // As ChannelListener's: only the connection listening now listens again, once, and one that drops is ended.
      let dropped = false;
      client.on('error', (error) => {
        if (dropped) return;
        dropped = true;
        this.options.onError?.(error);
        void client.end().catch(() => undefined);
        if (this.listener !== client) return;
        this.listener = undefined;
        this.listenAgain(1_000);
      });
      client.on('notification', (message) => {
        for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
      });
      try {
        await client.connect();
        for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
        this.listener = client;
      } catch (error) {
        dropped = true;
        await client.end().catch(() => undefined);
        throw error;
      } finally {
        this.connecting = undefined;
      }
    })());
  }

  /** Listens again after a drop, with a growing wait (up to RELISTEN_MAX_MS). */
  private listenAgain(waitMs: number): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed || this.listener) return;
      this.listen().catch(() => this.listenAgain(Math.min(waitMs * 2, RELISTEN_MAX_MS)));
    }, waitMs).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
