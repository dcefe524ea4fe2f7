import type pg from 'pg';
import { RELISTEN_MAX_MS, type PostgresOptions } from './options.js';
import { listeningClient } from './pools.js';

/**
 * One LISTEN connection kept open for as long as its owner wants it: made at the first
 * `listen`, listening on every channel `channels` names then, and, after a drop, made again
 * with a growing wait (up to RELISTEN_MAX_MS) until the database answers. The replica's
 * job and clock news (channelListener) and its signals between replicas (PgSignals) each
 * keep one.
 *
 * Only the connection listening now starts a listen again when it drops, and only once (a
 * fast shutdown errs a connection twice); a connection that drops is ended, so none is
 * left holding a server slot. A chain of tries per drop would leave a connection per
 * chain, and each outage would double them.
 */
export class KeptListen {
  private client: pg.Client | undefined;
  /** The connection being made, while one is: every try in the meantime waits for it rather than opening another. */
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly options: PostgresOptions,
    /** The channels to listen on, read each time a connection is made. */
    private readonly channels: () => Iterable<string>,
    private readonly onNotification: (message: pg.Notification) => void,
  ) {}

  /** Listens, unless a connection listens already (or the owner stopped it); resolves once one does. */
  listen(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    return (this.connecting ??= this.connect().finally(() => (this.connecting = undefined)));
  }

  /** Listens on one more channel on the connection listening now (the next connection takes it from `channels`). */
  async add(channel: string): Promise<void> {
    await this.client?.query(`LISTEN ${channel}`);
  }

  /** Listens again no more after a drop (see `end`, which closes the connection). */
  stop(): void {
    this.closed = true;
  }

  /** Stops, and closes the connection listening now. */
  async end(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = listeningClient(this.options);
    let dropped = false;
    client.on('error', (error) => {
      if (dropped) return;
      dropped = true;
      this.options.onError?.(error);
      void client.end().catch(() => undefined);
      if (this.client !== client) return; // still connecting: its try fails, and the caller tries again
      this.client = undefined;
      this.listenAgain(1_000);
    });
    client.on('notification', this.onNotification);
    try {
      await client.connect();
      const listens = [...this.channels()].map((channel) => `LISTEN ${channel}`);
      if (listens.length > 0) await client.query(listens.join('; '));
    } catch (error) {
      dropped = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    // Dropped while it was made, or stopped meanwhile: this one is not kept.
    if (dropped || this.closed) {
      await client.end().catch(() => undefined);
      if (dropped && !this.closed) throw new Error('The LISTEN connection dropped as it was made.');
      return;
    }
    this.client = client;
  }

  /** Listens again after a drop, trying with a growing wait (up to RELISTEN_MAX_MS) until the database answers. */
  private listenAgain(waitMs: number): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed || this.client) return;
      this.listen().catch(() => this.listenAgain(Math.min(waitMs * 2, RELISTEN_MAX_MS)));
    }, waitMs).unref();
  }
}
