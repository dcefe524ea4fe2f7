import type pg from 'pg';
import { Conflict } from '../../shared/index.js';
import type { Repositories } from '../port.js';
import { STALE_VERSION } from './db.js';
import { codeOf } from './reachability.js';
import { statement } from './statements.js';

/** A unit of work under way: its transaction's connection and what it holds back. */
export interface TxContext {
  client: pg.PoolClient;
  repos: Repositories;
  /** Jobs the transaction scheduled (due time, client): told to listeners once it commits. */
  scheduled: Array<[number, string]>;
  /** Whether BEGIN was sent: it goes with the unit's first statement. */
  begun: boolean;
  /** Writes whose outcome no one waits for: sent with the next statement or the COMMIT. */
  later: Array<{ text: string; values: unknown[] }>;
  /** Batch ids of the orders the unit wrote. */
  batches: Set<string>;
}

/**
 * A failure of a write held back: one that meets a record another unit
 * wrote first (a taken key, a taken batch id: see PgOrders) or changed first
 * (ONE_ROW_OR_STALE) is a Conflict, and the unit is tried again, as when it ran on its own.
 */
function heldFailure(error: unknown): unknown {
  const taken = codeOf(error) === '23505' || (codeOf(error) === '23502' && (error as { column?: string }).column === 'batch_id');
  if (taken) return new Conflict(`A record this unit of work writes exists already: ${(error as Error).message}`);
  if (codeOf(error) === STALE_VERSION) return new Conflict('A record this unit of work changes was changed by another meanwhile.');
  return error;
}

/**
 * Sends BEGIN if not sent yet, the writes held back, and `last`, in one write to the
 * socket; its answer once all are answered. Each round trip costs both sides a write to
 * the socket and a wake-up of the other process, so a unit makes only those whose answer
 * it waits for: BEGIN goes with the unit's first statement, and writes whose outcome no
 * one waits for (a new order, a job) go with the next statement or with the COMMIT. They
 * go pipelined (pg's `pipeline` mode), each a prepared statement of its own: one round
 * trip, and the server parses and plans none of them again (one multi-statement text
 * would be parsed and planned anew at every unit).
 */
export async function inOneTrip(tx: TxContext, last: string, values?: unknown[]): Promise<pg.QueryResult> {
  const held = tx.later;
  if (tx.begun && held.length === 0) return tx.client.query(statement(last, values));
  const stream = (tx.client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
  const sent: Array<Promise<unknown>> = [];
  let answer: Promise<pg.QueryResult>;
  stream.cork();
  try {
    if (!tx.begun) sent.push(tx.client.query('BEGIN'));
    for (const write of held) sent.push(tx.client.query(statement(write.text, write.values)));
    answer = tx.client.query(statement(last, values));
  } finally {
    tx.begun = true;
    tx.later = [];
    // Sent once the code running now has asked all it asks at once (a job's reads side by side): one write.
    queueMicrotask(() => stream.uncork());
  }
  // The pipeline answers in order: once `answer` is, every statement before it is. A
  // statement after a failed one fails too ("current transaction is aborted"), and a
  // COMMIT after one is a ROLLBACK: the first failure is the unit's.
  const outcomes = await Promise.allSettled([...sent, answer]);
  const first = outcomes.findIndex((outcome) => outcome.status === 'rejected');
  if (first >= 0) {
    const reason = (outcomes[first] as PromiseRejectedResult).reason;
    throw first >= sent.length - held.length && first < sent.length ? heldFailure(reason) : reason;
  }
  return (outcomes.at(-1) as PromiseFulfilledResult<pg.QueryResult>).value;
}
