import type { Request, Response } from 'express';
import { asRead, headerOf } from '../../shared/index.js';
import type { CompiledOperation } from '../../spec/index.js';
import { ApiError, toApiError } from '../errors.js';
import type { Handler } from '../handler.js';
import { sendError, sendReply } from '../respond.js';
import { isReadOperation } from '../roles.js';
import { noteServed } from '../response-notes.js';
import { appliedRuleId } from '../../faults/index.js';
import { admit } from './admit.js';
import { beforeAnswer, statusOf } from './answer.js';
import { arrive } from './arrive.js';
import { exchangeOf, type Exchange } from './exchange.js';
import { RequestGone, stillWanted, waitTurn } from './fair-turn.js';
import { identify } from './identify.js';
import { intercepted } from './intercept.js';
import { observe } from './observe.js';
import type { PipelineOptions } from './options.js';
import { readBody, readBodyForJournal, screenBody } from './body.js';
import { validate } from './validate.js';

/**
 * Serves one request of an operation whose path and method matched, with its path's
 * parameters, or the 400 of one that could not be decoded: answered after the token and
 * the rate limit are checked, as any other refusal of the request, and logged with its client.
 */
export type ServeOperation = (req: Request, res: Response, params: Record<string, string> | ApiError) => Promise<void>;

/**
 * The request path of one operation, stage by stage: observe (told last), identify,
 * admit, arrive, screen a large body, wait the fair turn, read the body, validate, then intercept and handle, and answer.
 * Operations without security skip identify and admit and take turns in a lane of their
 * own, but for a health check, which takes no turn. Any stage may throw a domain or API
 * error: the request is then answered with the error envelope.
 */
export function serveOperation(op: CompiledOperation, handler: Handler, options: PipelineOptions): ServeOperation {
  const observers = options.observers ?? [];
  const onObserverError = options.onObserverError ?? (() => undefined);
  const { scope } = options;
  // Settings read from the handler on are read afresh (the scope's pre-read is for the interceptors).
  const afterPreRead: Handler = (input) => {
    scope!.endPreRead();
    return handler(input);
  };
  const handle = intercepted(options.interceptors, scope ? afterPreRead : handler);
  const serve = async (req: Request, res: Response, params: Record<string, string> | ApiError): Promise<void> => {
    const x = exchangeOf(op, req, res, params instanceof ApiError ? {} : params, options);
    if (observers.length > 0) observe(x, observers, onObserverError);
    try {
      if (op.secured) {
        identify(x);
        await admit(x);
      }
      if (params instanceof ApiError) throw params;
      arrive(x);
      const screening = screenBody(x);
      if (screening) await screening;
      if (!(await waitTurn(x))) return;
      readBody(x);
      validate(x);
      noteServed(res, op.operationId, x.input.client?.id, () => appliedRuleId(x.input));
      const reply = await handle(x.input);
      if ('status' in reply && reply.status === 503) noteRetryAfter(x, reply.headers);
      const answering = beforeAnswer(x, statusOf(reply));
      if (answering) {
        // A reply cut after some ms is still being made: its failure is answered once sendReply awaits it, not left unhandled meanwhile.
        if ('cutAfterMs' in reply) reply.reply.catch(() => undefined);
        await answering;
      }
      await sendReply(res, reply);
    } catch (error) {
      // Its client hung up while a long read went on: nobody is left to answer (it is journaled as aborted, unanswered).
      if (error instanceof RequestGone) return;
      await refuse(x, error);
    }
  };
  if (!scope) return serve;
  // Ended at the latest with the request (one refused before its handler, say), so nothing it left running uses the pre-read.
  // Only a read is cut short when its client hangs up: a change (a reset's removals) or the work it starts goes on to its end.
  const cutShort = isReadOperation(op) ? stillWanted : undefined;
  return (req, res, params) => scope.run(() => serve(req, res, params).finally(() => scope.endPreRead(true)), cutShort?.(req));
}

/**
 * Answers a request a stage refused (or whose handler failed) with the error envelope; a
 * 400 keeps its field errors for the journal. A read's store that cannot be reached is
 * said as "cannot read", a read asked in a body (`x-sandbox-read`) as much as a GET.
 */
async function refuse(x: Exchange, failure: unknown): Promise<void> {
  const error = isReadOperation(x.op) ? asRead(failure) : failure;
  arrive(x);
  readBodyForJournal(x);
  noteServed(x.res, x.op.operationId, x.input.client?.id ?? x.callerClient, () => appliedRuleId(x.input));
  const answered = toApiError(error);
  if (answered.status === 400) x.served.violations = answered.errors;
  noteRetryAfter(x, answered.headers);
  const answering = x.res.headersSent ? undefined : beforeAnswer(x, answered.status);
  if (answering) await answering;
  sendError(x.res, error);
}

/** Keeps the Retry-After an answer carries (a refusal's, a Prefer's 503) with the request, for the readiness report to judge the retry's wait by. */
function noteRetryAfter(x: Exchange, headers: Record<string, string> | undefined): void {
  const retryAfter = headerOf(headers, 'retry-after');
  if (retryAfter !== undefined) x.input.retryAfter = retryAfter;
}
