import type pg from 'pg';
import { statement } from './statements.js';

// Taken when the module loads: a test suite that fakes the timers afterwards (vitest's
// useFakeTimers fakes setImmediate) must not leave every grouped read unsent.
const { setImmediate } = globalThis;

/** The texts of the statements that read a row or two by key (see pointRead). */
const POINT_READS = new Set<string>();

/**
 * Marks a statement text as a point read: a read of a few rows by a key, answered in a
 * fraction of a millisecond, which PointReads may send together with others.
 */
export function pointRead(text: string): string {
  POINT_READS.add(text);
  return text;
}

export const isPointRead = (text: string): boolean => POINT_READS.has(text);

/** The most point reads one group holds: a group is answered in order, the last after all the others. */
const GROUP_MAX = 16;

interface Group {
  /** The connection and its permit, once the group has them. */
  connection: Promise<{ client: pg.PoolClient; release: () => void }>;
  /** Reads sent and not yet answered. */
  open: number;
  /** True once no more reads join (the group's writes went out). */
  closed: boolean;
  /** True once a read met a failure that is not the statement's own (the connection is not given back to the pool). */
  broken: boolean;
  size: number;
  /** True once its connection and permit were given back. */
  released: boolean;
}

/**
 * Point reads outside a unit of work, sent together: those of concurrent requests that
 * come in one turn of the event loop go on one pooled connection, pipelined, in one write
 * to the socket, and are answered in one or a few reads. Each round trip costs both the
 * replica and the database a write to the socket and a wake-up, which is most of what a
 * short read costs; under load, a turn of the loop starts the reads of several requests.
 * Reads are grouped by the lane they wait in at the gate (their client's, see
 * RequestScopes): a group takes one connection and one permit in that lane, for as long
 * as its reads take, so one client's reads never ride on another's turn at the gate. Only point reads are grouped: a read waits
 * for those sent before it on its connection, so a slow one (a listing) would hold up the
 * others. Each read is a statement of its own (its own Sync): one that fails fails alone.
 */
export class PointReads {
  /** The open group of each lane. */
  private readonly groups = new Map<string, Group>();

  constructor(
    /** A permit of the gate and a connection of the requests' pool, in the lane of the work running now. */
    private readonly connect: () => Promise<{ client: pg.PoolClient; release: () => void }>,
    /** The lane the work running now waits in at the gate. */
    private readonly laneNow: () => string,
  ) {}

  async query(text: string, values: unknown[] | undefined): Promise<pg.QueryResult> {
    const group = this.join();
    const { client } = await group.connection;
    try {
      return await client.query(statement(text, values));
    } catch (error) {
      // A statement's own failure has a SQLSTATE; anything else (a dropped connection, a timeout) leaves the connection in doubt.
      if (!/^[0-9A-Z]{5}$/.test(String((error as { code?: unknown }).code))) group.broken = true;
      throw error;
    } finally {
      group.open -= 1;
      this.end(group);
    }
  }

  /** The open group, or a new one. */
  private join(): Group {
    const lane = this.laneNow();
    let group = this.groups.get(lane);
    if (!group || group.closed || group.size >= GROUP_MAX) {
      const opened: Group = { connection: undefined as never, open: 0, closed: false, broken: false, size: 0, released: false };
      opened.connection = this.connect().then((held) => {
        // Every read that joins before the loop's next turn goes out in one write.
        const stream = (held.client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
        stream.cork();
        setImmediate(() => {
          opened.closed = true;
          if (this.groups.get(lane) === opened) this.groups.delete(lane);
          stream.uncork();
          this.end(opened);
        });
        return held;
      });
      // A group that got no connection is not joined again.
      opened.connection.catch(() => {
        opened.closed = true;
        if (this.groups.get(lane) === opened) this.groups.delete(lane);
      });
      group = opened;
      this.groups.set(lane, opened);
    }
    group.open += 1;
    group.size += 1;
    return group;
  }

  /** Gives the group's connection and permit back once it is closed and every read of it is answered. */
  private end(group: Group): void {
    if (!group.closed || group.open > 0 || group.released) return;
    group.released = true;
    void group.connection.then(({ client, release }) => {
      client.release(group.broken);
      release();
    }, () => undefined);
  }
}
