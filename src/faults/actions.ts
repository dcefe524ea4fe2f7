import type { Response } from 'express';
import type { OperationInput, Reply } from '../http/handler.js';
import type { StatusReply } from '../spec/mock.js';
import type { HungRequests } from './hung.js';
import { faultMessages } from './messages.js';
import type { FaultAction, FaultRule } from './types.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const bodyBytes = (reply: StatusReply): Buffer => Buffer.from(reply.serialized ?? (reply.body === undefined ? '' : JSON.stringify(reply.body)));

/** Writes a reply's status line and headers, for actions that write its body themselves. */
function writeHead(res: Response, reply: StatusReply, bytes: Buffer): void {
  res.status(reply.status);
  if (reply.headers) res.set(reply.headers);
  if (bytes.length > 0) res.type(reply.type ?? 'application/json');
  res.setHeader('Content-Length', bytes.length);
  res.flushHeaders();
}

/** Sends a JSON reply a few bytes at a time, no faster than `bytes_per_second`. */
function dribble(res: Response, reply: StatusReply, action: Extract<FaultAction, { type: 'dribble' }>): Reply {
  const bytes = bodyBytes(reply);
  const wanted = action.interval_ms ?? 100;
  const chunk = Math.max(1, Math.floor((action.bytes_per_second * wanted) / 1000));
  const interval = Math.max(wanted, (chunk * 1000) / action.bytes_per_second);
  writeHead(res, reply, bytes);
  let offset = 0;
  const tick = (): void => {
    if (res.destroyed) return;
    res.write(bytes.subarray(offset, offset + chunk));
    offset += chunk;
    if (offset >= bytes.length) res.end();
    else setTimeout(tick, interval);
  };
  if (bytes.length === 0) res.end();
  else setTimeout(tick, interval);
  return { streamed: true };
}

/**
 * Lets the request run and resets the connection `after_ms` later: a stream is cut
 * wherever it is; a JSON answer that is ready sooner is sent up to half its body,
 * then cut.
 */
async function cutAfter(input: OperationInput, afterMs: number, next: () => Promise<Reply>): Promise<Reply> {
  const { req, res } = input.raw;
  const timer = setTimeout(() => req.socket.resetAndDestroy(), afterMs);
  res.once('close', () => clearTimeout(timer));
  const reply = await next();
  if ('streamed' in reply || res.headersSent || res.destroyed) return reply;
  const bytes = bodyBytes(reply);
  writeHead(res, reply, bytes);
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
  return { streamed: true };
}

/** Does what a fault rule says to a request it applies to. `chance` draws in [0, 1). */
export async function performFault(
  rule: FaultRule,
  input: OperationInput,
  next: () => Promise<Reply>,
  hung: HungRequests,
  chance: (key: string) => number,
): Promise<Reply> {
  const { action } = rule;
  switch (action.type) {
    case 'status': {
      const body = action.body ?? (action.status >= 400 ? { success: false, message: faultMessages.injected(action.status, rule.id), errors: [] } : undefined);
      return { status: action.status, body, headers: action.headers };
    }
    case 'latency': {
      const max = action.max_ms ?? action.ms;
      await sleep(action.ms + Math.floor(chance(`latency:${rule.id}:${rule.hits}`) * (max - action.ms + 1)));
      return next();
    }
    case 'reset':
      if (action.after_ms !== undefined) return cutAfter(input, action.after_ms, next);
      input.raw.req.socket.resetAndDestroy();
      return { streamed: true };
    case 'hang':
      return hung.hold(input.raw.res);
    case 'dribble': {
      const reply = await next();
      return 'streamed' in reply ? reply : dribble(input.raw.res, reply, action);
    }
  }
}
