/** Jobs running, per client (both lanes): an advance waits for its client's, whoever claimed them. */
export class Running {
  private readonly byClient = new Map<string, Set<Promise<unknown>>>();

  track<T>(clientId: string, work: Promise<T>): Promise<T> {
    let set = this.byClient.get(clientId);
    if (!set) this.byClient.set(clientId, (set = new Set()));
    set.add(work);
    const done = (): void => {
      set.delete(work);
      if (set.size === 0 && this.byClient.get(clientId) === set) this.byClient.delete(clientId);
    };
    work.then(done, done);
    return work;
  }

  busy(clientId: string): boolean {
    return this.byClient.has(clientId);
  }

  /** Resolves once none of the client's jobs is running. */
  async idle(clientId: string): Promise<void> {
    for (let set = this.byClient.get(clientId); set; set = this.byClient.get(clientId)) await Promise.allSettled([...set]);
  }
}
