import pg from 'pg';
import { CLOCKS_CHANNEL, type PgClocks } from './clocks.js';
import { JOBS_CHANNEL, type JobNotices } from './job-notices.js';
import type { PostgresOptions } from './options.js';

/**
 * The replica's LISTEN connection: other replicas' news of scheduled jobs (to JobNotices)
 * and of moved clocks (to PgClocks). After a drop it listens again, trying with a growing
 * wait until the database answers.
 */
export class ChannelListener {
  private listener: pg.Client | undefined;
  private closed = false;

  constructor(
    private readonly options: PostgresOptions,
    private readonly notices: JobNotices,
    private readonly clocks: PgClocks,
  ) {}

  async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url });
    client.on('error', (error) => {
      this.options.onError?.(error);
      if (this.listener === client) this.listener = undefined;
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
      // The caller tries again (or fails the start): this connection's later errors are of no one's interest, but must be listened to.
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      throw error;
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

  /** Listens again after a drop, trying with a growing wait (up to 30 s) until the database answers; meanwhile each replica's 5 s look for due jobs goes on. */
  private listenAgain(waitMs: number): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed || this.listener) return;
      this.listen().catch(() => this.listenAgain(Math.min(waitMs * 2, 30_000)));
    }, waitMs).unref();
  }
}
