import { AsyncLocalStorage } from 'node:async_hooks';
import { within } from '../shared/index.js';

/**
 * A job's place in a row of jobs that run side by side but must take something in their
 * row's order (an AWB number: a seeded sandbox gives the same order the same AWB
 * however the jobs interleave). `inOrder` sections run one at a time, in the row's
 * order; a job that ends without reaching one gives its place up as it ends.
 */
export class NumberingOrder {
  private passed!: () => void;
  /** Resolves once this place is given up (its section ran, or its job ended). */
  readonly done = new Promise<void>((resolve) => (this.passed = resolve));

  constructor(
    /** Resolves once the place before this one is given up. */
    readonly after: Promise<void>,
  ) {}

  pass(): void {
    this.passed();
  }
}

const current = new AsyncLocalStorage<NumberingOrder>();

/**
 * How long a job waits for its place at most (wall ms). A job waits for its place inside
 * its unit of work, holding a connection; an earlier job tried again after a conflict
 * queues for a connection anew: past this wait the later ones go on out of order rather
 * than hold their connections longer (their numbers then follow timing).
 */
const ORDER_WAIT_MS = 250;

/** Runs `fn` outside any row's order. */
export function outsideOrder<T>(fn: () => T): T {
  return current.exit(fn);
}

/** Runs `fn` (a job) holding `place`, and gives the place up when it ends. */
export async function holdingPlace<T>(place: NumberingOrder, fn: () => Promise<T>): Promise<T> {
  try {
    return await current.run(place, fn);
  } finally {
    place.pass();
  }
}

/**
 * Runs `fn` once every earlier job of the row has taken its numbers; at once outside a
 * row (a request, a job run alone) or when the place was taken already (a unit tried again).
 *
 * @example
 * const awb = await inOrder(async () => awbOf(await tx.counters.next('awb:XP')));
 */
export async function inOrder<T>(fn: () => Promise<T>): Promise<T> {
  const place = current.getStore();
  if (!place) return fn();
  await within(place.after, ORDER_WAIT_MS);
  try {
    return await fn();
  } finally {
    place.pass();
  }
}
