import pg from 'pg';
import { CLOCKS_CHANNEL, type PgClocks } from './clocks.js';
import { JOBS_CHANNEL, type JobNotices } from './job-notices.js';
import { RELISTEN_MAX_MS, type PostgresOptions } from './options.js';
import { listeningClient } from './pools.js';

/**
 * The replica's LISTEN connection: other replicas' news of scheduled jobs (to JobNotices)
 * and of moved clocks (to PgClocks). After a drop it listens again, trying with a growing
 * wait until the database answers.
 */
export class ChannelListener {
  private listener: pg.Client | undefined;
  /** The connection being made, while one is: every try in the meantime waits for it rather than opening another. */
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly options: PostgresOptions,
    private readonly notices: JobNotices,
    private readonly clocks: PgClocks,
  ) {}

  /**
   * Listens on one connection. Only the connection listening now starts a listen again
   * when it drops, and only once (a fast shutdown errs a connection twice); a connection
   * that drops is ended, so none is left holding a server slot. A chain of tries per drop
   * would leave a connection per chain, and each outage would double them.
   */
  listen(): Promise<void> {
    if (this.listener || this.closed) return Promise.resolve();
    return (this.connecting ??= this.connect().finally(() => (this.connecting = undefined)));
  }

  private async connect(): Promise<void> {
    const client = listeningClient(this.options);
    let dropped = false;
    client.on('error', (error) => {
      if (dropped) return;
      dropped = true;
      this.options.onError?.(error);
      void client.end().catch(() => undefined);
      if (this.listener !== client) return; // still connecting: its try fails, and the caller tries again
      this.listener = undefined;
      this.listenAgain(1_000);
    });
    client.on('notification', (message) => {
      if (message.channel === CLOCKS_CHANNEL) return this.clocks.notified(message.payload);
      this.notices.received(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}; LISTEN ${CLOCKS_CHANNEL}`);
    } catch (error) {
      dropped = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (dropped || this.closed) {
      await client.end().catch(() => undefined);
      if (dropped && !this.closed) throw new Error('The LISTEN connection dropped as it was made.');
      return;
    }
    this.listener = client;
  }

  /** Listens again no more after a drop (see `end`, which closes the connection). */
  stop(): void {
    this.closed = true;
  }

  async end(): Promise<void> {
    await this.listener?.end().catch(() => undefined);
  }

  /** Listens again after a drop, trying with a growing wait (up to RELISTEN_MAX_MS) until the database answers; meanwhile each replica's 5 s look for due jobs goes on. */
  private listenAgain(waitMs: number): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed || this.listener) return;
      this.listen().catch(() => this.listenAgain(Math.min(waitMs * 2, RELISTEN_MAX_MS)));
    }, waitMs).unref();
  }
}
