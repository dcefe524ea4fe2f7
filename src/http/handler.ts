import type { Client } from '../clients/index.js';
import type { OperationInput } from '../requests/index.js';
import { domainMessages, RuleViolation } from '../shared/index.js';

export type { OperationInput };

/** A status with a JSON body (or a body already serialized, of `type`). */
export interface BodyReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The body already written out (JSON, unless `type` says otherwise), sent as it is. */
  serialized?: string | Buffer;
  /** Media type of `serialized` when it is not JSON. */
  type?: string;
}

/** Where a streamed answer writes. */
export interface ReplySink {
  /** Writes a part; false when the connection's buffer is full (then wait for `onDrain`). */
  write(chunk: string): boolean;
  /** Called once when the connection's buffer has room again after a write answered false. */
  onDrain(listener: () => void): void;
  end(chunk?: string): void;
  /** Cuts the answer off unfinished (a later part could not be made): the client sees a broken answer, not a short one. */
  abort(): void;
  /** True once the client has gone away or the answer has ended. */
  readonly closed: boolean;
  /** Called once when the connection closes, whoever closed it. */
  onClose(listener: () => void): void;
}

/** A status and headers, then a body written over time (server-sent events). */
export interface StreamReply {
  status: number;
  headers: Record<string, string>;
  stream(sink: ReplySink): void;
}

/**
 * What a handler or an interceptor answers. The HTTP edge (`respond.ts`) is the only
 * code that writes to the connection:
 * - a body or a stream;
 * - `reset`: the connection is dropped at once;
 * - `cutAfterMs`: `reply` goes out, and the connection is dropped after that many ms
 *   (a body ready sooner is sent up to half, then cut);
 * - `hold`: nothing is answered until the client gives up or `hold` aborts;
 * - `dribble`: `reply`'s body (or stream) is sent `chunkBytes` at a time, one chunk per
 *   `intervalMs`, and what is left at once when `hurry` aborts.
 * `released`, when given, is called once the connection of a cut, held or dribbled answer closes.
 */
export type Reply =
  | BodyReply
  | StreamReply
  | { reset: true }
  | { cutAfterMs: number; reply: Promise<Reply>; released?: () => void }
  | { hold: AbortSignal; released?: () => void }
  | { dribble: { chunkBytes: number; intervalMs: number }; reply: BodyReply | StreamReply; hurry: AbortSignal; released?: () => void };

export type Handler = (input: OperationInput) => Reply | Promise<Reply>;

/** Handlers keyed by operationId. */
export type HandlerMap = Record<string, Handler>;

/**
 * Wraps the handling of one request: faults, Prefer answers and the request journal
 * plug in here. Call `next()` to go on.
 */
export type Interceptor = (input: OperationInput, next: () => Promise<Reply>) => Promise<Reply>;

/** The client of an input on a secured operation (one that is not `x-sandbox-scope: sandbox`). */
export function clientOf(input: OperationInput): Client {
  if (!input.client) throw new Error(`${input.operation.operationId} needs security in its spec, and a client scope`);
  return input.client;
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): BodyReply => ({ status, body, headers });

export const isBodyReply = (reply: Reply): reply is BodyReply => 'status' in reply && !('stream' in reply);

/** Parts of a listing answer written at a time, in bytes of JSON text (about). */
const LIST_PART_BYTES = 64 * 1024;

// Taken when the module loads: a test suite that fakes the timers afterwards (vitest's
// useFakeTimers fakes setImmediate) must still get every part of a long listing.
const { setImmediate } = globalThis;

/**
 * A 200 with the JSON object `head` and, last, `field` holding `items` (each as `view`
 * shows it): as one body when it fits in one part of 64 KiB, else written in parts, each
 * with the event loop let go in between and only once the connection has room for it. A
 * client's request journal can be 16 MiB and more of JSON: written in one go, that held
 * every other client's requests for about a second, and a slow reader kept all of it in
 * memory at once. An item's view is made as its part is written: a page of 1,000 orders
 * viewed at once held the loop for tens of ms per listing, and a burst of such listings
 * on new connections kept every partner's new connection waiting in the accept queue.
 */
export function listInParts<T>(head: Record<string, unknown>, field: string, items: readonly T[], view: (item: T) => unknown = (item) => item, turn?: () => Promise<void>): Reply {
  const opening = JSON.stringify(head);
  const start = `${opening.slice(0, -1)}${opening.length > 2 ? ',' : ''}${JSON.stringify(field)}:[`;
  let next = 0;
  const part = (first: string): string => {
    let text = first;
    while (next < items.length && text.length < LIST_PART_BYTES) text += `${next > 0 ? ',' : ''}${JSON.stringify(view(items[next++]!)) ?? 'null'}`;
    return next === items.length ? `${text}]}` : text;
  };
  const firstPart = part(start);
  if (next === items.length) return { status: 200, serialized: firstPart };
  return {
    status: 200,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    stream: (sink) => {
      const write = (text: string): void => {
        if (sink.closed) return;
        if (next === items.length && text.endsWith(']}')) return sink.end(text);
        const room = sink.write(text);
        // The next part in the request's turn where it has one (its client's share of the loop), else after the loop's waiting work.
        // A part that cannot be made (an item the view cannot show) cuts the answer off: thrown here, after the handler answered, it would end the process.
        const more = (): void => {
          try {
            write(part(''));
          } catch {
            sink.abort();
          }
        };
        const go = (): void => void (turn ? turn().then(more, more) : setImmediate(more));
        if (room) go();
        else sink.onDrain(go);
      };
      write(firstPart);
    },
  };
}

/** A time a request gives (ISO 8601) in epoch ms, or a 400 naming `field`. */
export function timeField(field: string, text: string): number {
  const ms = Date.parse(text);
  // The schema's date-time admits a leap second (23:59:60) that Date cannot read.
  if (!Number.isFinite(ms)) throw new RuleViolation([{ field, message: domainMessages.unreadableTime }]);
  return ms;
}
