/**
 * The read kept under `key` in `reads`, started by `read` the first time it is asked
 * for. Whoever asks again while it runs, or after it succeeded, shares it; a read that
 * failed is dropped once it fails, so the next ask reads again. Whoever awaits it sees
 * the failure; one nobody awaits in the end fails quietly.
 *
 * @example
 * const order = remembered(this.orders, awb, () => storage.orders.byAwb(awb));
 */
export function remembered<K, T>(reads: Map<K, Promise<T>>, key: K, read: () => Promise<T>): Promise<T> {
  const kept = reads.get(key);
  if (kept) return kept;
  const pending = read();
  reads.set(key, pending);
  pending.catch(() => void (reads.get(key) === pending && reads.delete(key)));
  return pending;
}
