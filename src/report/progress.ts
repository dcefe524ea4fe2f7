/** Someone waiting until the client's observations up to `upTo` have their marks stored, or are judged and stored whole. */
interface Waiter {
  upTo: number;
  of: 'marked' | 'judged';
  done: () => void;
}

/**
 * How far the judging of each client's observations has come: how many were taken, how
 * many have their marks stored (what the client's next request is judged against), how
 * many are judged and stored whole, and who waits for which. Counted in the order the
 * observations were taken.
 */
export class JudgingProgress {
  private readonly byClient = new Map<string, { taken: number; marked: number; judged: number; waiters: Waiter[] }>();

  /** Counts one more observation of the client taken; its number, or undefined when `most` already wait. */
  take(clientId: string, most: number): number | undefined {
    let progress = this.byClient.get(clientId);
    if (progress && progress.taken - progress.judged >= most) return undefined;
    if (!progress) this.byClient.set(clientId, (progress = { taken: 0, marked: 0, judged: 0, waiters: [] }));
    progress.taken += 1;
    return progress.taken;
  }

  /** Resolves once every observation taken so far is judged and stored. */
  settled(clientId: string): Promise<void> {
    const progress = this.byClient.get(clientId);
    if (!progress || progress.judged >= progress.taken) return Promise.resolve();
    return new Promise((done) => progress.waiters.push({ upTo: progress.taken, of: 'judged', done }));
  }

  /** Resolves once the marks of the observations up to `upTo` are stored (or lost), or after `atMostMs`. */
  marksStored(clientId: string, upTo: number, atMostMs: number): Promise<void> {
    const progress = this.byClient.get(clientId);
    if (!progress || progress.marked >= upTo) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(done, atMostMs).unref();
      progress.waiters.push({ upTo, of: 'marked', done: () => (clearTimeout(timer), done()) });
    });
  }

  /** Whether someone waits for marks of the client not stored yet (an answer, see ReportObserver.answer). */
  answerWaits(clientId: string): boolean {
    return this.byClient.get(clientId)?.waiters.some((waiter) => waiter.of === 'marked') === true;
  }

  /** Counts `n` more of the client's observations with their marks stored, or judged and stored whole, and lets go of whoever waited for them. */
  advance(clientId: string, n: number, what: 'marked' | 'judged'): void {
    const progress = this.byClient.get(clientId);
    if (!progress) return;
    if (what === 'marked') progress.marked += n;
    else progress.judged += n;
    const reached = (waiter: Waiter): boolean => waiter.upTo <= progress[waiter.of];
    for (const waiter of progress.waiters) if (reached(waiter)) waiter.done();
    progress.waiters = progress.waiters.filter((waiter) => !reached(waiter));
    if (progress.judged >= progress.taken && progress.waiters.length === 0) this.byClient.delete(clientId);
  }
}
