/** Blocks the thread for `ms` milliseconds: a starter waits on the lock before it serves anything. */
export function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
