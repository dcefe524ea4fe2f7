/** How many bodies sent with one token the edge reads at once. */
export const MAX_BODIES_READING = 64;

/**
 * The bodies being read, per token (its caller): a body arriving slowly holds what has
 * come of it (up to the body limit, decompressed) until its last byte or its connection's
 * end, so the slow or held bodies of one token are bounded in number: past
 * MAX_BODIES_READING at once, one more is refused with a 429 without being read. A body
 * sent in one go is read as it arrives and counts for a moment only. Per token, not per
 * client: a read_only token handed to a contractor, or one admin, cannot hold the bodies
 * of the client's other tokens, or of the other admins.
 */
export class BodiesReading {
  private readonly counts = new Map<object, number>();

  /** Counts one more body of `caller`; undefined when it has as many as it may. Else the call that ends it (once). */
  start(caller: object): (() => void) | undefined {
    const count = this.counts.get(caller) ?? 0;
    if (count >= MAX_BODIES_READING) return undefined;
    this.counts.set(caller, count + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.counts.get(caller) ?? 1) - 1;
      if (left === 0) this.counts.delete(caller);
      else this.counts.set(caller, left);
    };
  }
}
