const keyOf = (clientId: string, origin: string): string => `${clientId}\u0000${origin}`;

/** How many answers' times are kept: enough for every window a client's next requests are judged against. */
const KEPT = 4_096;

/**
 * When this replica's answers that waited for their marks went out (see
 * ReportObserver.answer), by client and their requests' origin (see Judging.replica: its
 * arrival numbers are counted per client). A request of
 * the client that arrived before such an answer went out (one of a worker pool's, on
 * its way already) could not have read it: judged against a 503's Retry-After, it is
 * not hammering the operation.
 */
export class AnswersOut {
  private readonly waiting = new Set<string>();
  private readonly out = new Map<string, number>();

  /** The answer of the client's request `origin` names waits for its marks. */
  hold(clientId: string, origin: string): void {
    this.waiting.add(keyOf(clientId, origin));
  }

  /** That answer goes out now (its marks are stored, or it waited its longest). */
  release(clientId: string, origin: string, wall: number): void {
    const key = keyOf(clientId, origin);
    this.waiting.delete(key);
    this.out.set(key, wall);
    if (this.out.size > KEPT) this.out.delete(this.out.keys().next().value!);
  }

  /** When the answer of the client's request `origin` names went out: 'waiting' while it has not, undefined when this replica does not know (another's, or long ago). */
  of(clientId: string, origin: string): number | 'waiting' | undefined {
    const key = keyOf(clientId, origin);
    return this.waiting.has(key) ? 'waiting' : this.out.get(key);
  }
}
