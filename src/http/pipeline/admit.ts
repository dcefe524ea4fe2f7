import { TooManyRequests } from '../../shared/index.js';
import { laneOf, type Exchange } from './exchange.js';
import { arrive } from './arrive.js';
import { RequestGone, waitTurn } from './fair-turn.js';

/** Operations whose handler reads one order by the AWB in this path parameter: a shared store reads it with the client's clock. */
const READS_ORDER_BY_AWB: Readonly<Record<string, string>> = { trackOrder: 'order_no' };
/** What may be an AWB (the spec's pattern for it): anything else is refused by validation, after this stage, and never sent to a store. */
const MAY_BE_AWB = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Stage 2, admit: the rate limit of the caller's lane (rejects with the 429, in the
 * client's turn), then the
 * client's clock brought up to what a shared store keeps, so the request is served at the
 * client's time (with, in the same read, the order a tracking read answers from). An
 * admin acting for a client spends the admins' budget, not the client's.
 */
export async function admit(x: Exchange): Promise<void> {
  const { input, options } = x;
  if (options.admit) await options.admit(laneOf(input)).catch((refusal: unknown) => refusedInTurn(x, refusal));
  const param = READS_ORDER_BY_AWB[x.op.operationId];
  const awb = param === undefined ? undefined : input.params[param];
  if (awb !== undefined && MAY_BE_AWB.test(awb)) options.scope?.readsOrder(awb);
  if (options.refreshClock) await options.refreshClock(input.client?.id ?? '');
}

/**
 * A request the rate limit refuses is answered in its client's fair turn, as any other: a
 * partner's closed-loop flood of refusals then waits in its own lane, rather than being
 * answered ahead of the other partners' requests (each refusal is still read, logged and
 * journaled). It is stamped and numbered as it is read, as an admitted request is; one
 * whose client hung up meanwhile is journaled as unanswered. A turn it cannot have (its
 * client's waiting requests at their cap) leaves the refusal to be answered at once.
 */
async function refusedInTurn(x: Exchange, refusal: unknown): Promise<never> {
  if (refusal instanceof TooManyRequests) {
    arrive(x);
    if (!(await waitTurn(x).catch(() => true))) throw new RequestGone('The client hung up while its refusal waited its turn.');
  }
  throw refusal;
}
