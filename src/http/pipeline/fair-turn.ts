import { bodyBytesOf } from '../edge.js';
import { laneOf, openLaneOf, type Exchange } from './exchange.js';

/** Thrown by a request's long read between its slices (OperationInput.between) once its client has hung up: nothing more is done for it, nor answered. */
export class RequestGone extends Error {
  override name = 'RequestGone';
}

/** Whether the client of the request has hung up (its connection closed). */
const hungUp = (req: Exchange['req']): boolean => req.socket.destroyed || !req.socket.writable;

/** Throws RequestGone once the client of `req` has hung up: what a store's scope asks before work the request waited for (RequestScope.run). */
export const stillWanted = (req: Exchange['req']) => (): void => {
  if (hungUp(req)) throw new RequestGone('The client hung up: its listing does not start.');
};

/**
 * Stage 4, the fair turn: an authenticated request waits for its client's turn among the
 * clients' requests (FairTurns); one to an operation that takes no token waits in that
 * operation's lane (openLaneOf), with the same bounds. A health check takes no turn.
 * Resolves false when the client gave up while it waited: nothing is done for it, and it
 * is journaled as aborted, unanswered.
 */
export async function waitTurn(x: Exchange): Promise<boolean> {
  const { req, input, options, op } = x;
  const turn = options.turn;
  if (!turn) return true;
  // A health check is answered as it is read: a probe neither waits behind anyone's requests nor is refused 429 for them.
  if (!op.secured && op.operationId === 'getHealth') return true;
  const lane = op.secured ? laneOf(input) : openLaneOf(op.operationId);
  await turn(lane, { bytes: bodyBytesOf(req) });
  if (hungUp(req)) return false;
  input.turn = () => turn(lane, { capped: false });
  input.between = async () => {
    await turn(lane, { capped: false });
    if (hungUp(req)) throw new RequestGone('The client hung up: its listing stops.');
  };
  return true;
}
