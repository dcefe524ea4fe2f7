import { bodyBytesOf } from '../edge.js';
import { laneOf, type Exchange } from './exchange.js';

/**
 * Stage 4, the fair turn: an authenticated request waits for its client's turn among the
 * clients' requests (FairTurns). Resolves false when the client gave up while it waited:
 * nothing is done for it, and it is journaled as aborted, unanswered.
 */
export async function waitTurn(x: Exchange): Promise<boolean> {
  const { req, input, options } = x;
  const turn = options.turn;
  if (!turn) return true;
  const lane = laneOf(input);
  await turn(lane, { bytes: bodyBytesOf(req) });
  if (req.socket.destroyed || !req.socket.writable) return false;
  input.turn = () => turn(lane, { capped: false });
  return true;
}
