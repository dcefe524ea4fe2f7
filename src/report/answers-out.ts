/**
 * How many answers' times are kept per client: enough for every window its next requests
 * are judged against (one per operation at a time), and no client's answers push out
 * another's.
 */
const KEPT_PER_CLIENT = 64;

/**
 * When this replica's answers that ask for the request again (a 503, a fault rule's 429)
 * went out, once they waited for their marks (see ReportObserver.answer), per client by
 * their requests' origin (see Judging.replica; its arrival numbers count per client). A
 * request of the client that arrived before such an answer went out (one of a worker
 * pool's, on its way already) could not have read it: judged against its Retry-After, it
 * is not hammering the operation; and the Retry-After is waited from then.
 */
export class AnswersOut {
  private readonly byClient = new Map<string, { waiting: Set<string>; out: Map<string, number> }>();

  /** The answer of the client's request `origin` names waits for its marks. */
  hold(clientId: string, origin: string): void {
    this.answersOf(clientId).waiting.add(origin);
  }

  /** That answer goes out now (its marks are stored, or it waited its longest). */
  release(clientId: string, origin: string, wall: number): void {
    const { waiting, out } = this.answersOf(clientId);
    waiting.delete(origin);
    out.set(origin, wall);
    if (out.size > KEPT_PER_CLIENT) out.delete(out.keys().next().value!);
  }

  /** When the answer of the client's request `origin` names went out: 'waiting' while it has not, undefined when this replica does not know (another's, or long ago). */
  of(clientId: string, origin: string): number | 'waiting' | undefined {
    const answers = this.byClient.get(clientId);
    if (answers === undefined) return undefined;
    return answers.waiting.has(origin) ? 'waiting' : answers.out.get(origin);
  }

  private answersOf(clientId: string): { waiting: Set<string>; out: Map<string, number> } {
    let answers = this.byClient.get(clientId);
    if (answers === undefined) this.byClient.set(clientId, (answers = { waiting: new Set(), out: new Map() }));
    return answers;
  }
}
