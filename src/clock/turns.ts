import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A job's place in a row of jobs that run side by side but must take something in their
 * row's order (an AWB number: a seeded sandbox gives the same order the same AWB
 * however the jobs interleave). `inTurn` sections run one at a time, in the row's
 * order; a job that ends without reaching one gives its turn up as it ends.
 */
export class Turn {
  private passed!: () => void;
  /** Resolves once this turn is given up (its section ran, or its job ended). */
  readonly done = new Promise<void>((resolve) => (this.passed = resolve));

  constructor(
    /** Resolves once the turn before this one is given up. */
    readonly after: Promise<void>,
  ) {}

  pass(): void {
    this.passed();
  }
}

const current = new AsyncLocalStorage<Turn>();

/**
 * How long a job waits for its turn at most (wall ms). A job waits for its turn inside its
 * unit of work, holding a connection; an earlier job tried again after a conflict queues
 * for a connection anew: past this wait the later ones go on out of order rather than
 * hold their connections longer (their numbers then follow timing).
 */
const TURN_WAIT_MS = 250;

/** Runs `fn` outside any row's turn. */
export function outsideTurn<T>(fn: () => T): T {
  return current.exit(fn);
}

/** Runs `fn` (a job) holding `turn`, and gives the turn up when it ends. */
export async function holdingTurn<T>(turn: Turn, fn: () => Promise<T>): Promise<T> {
  try {
    return await current.run(turn, fn);
  } finally {
    turn.pass();
  }
}

/**
 * Runs `fn` once every earlier job of the row has taken its turn; at once outside a row
 * (a request, a job run alone) or when the turn was taken already (a unit tried again).
 */
export async function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  const turn = current.getStore();
  if (!turn) return fn();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([turn.after, new Promise((resolve) => (timer = setTimeout(resolve, TURN_WAIT_MS).unref()))]);
  clearTimeout(timer);
  try {
    return await fn();
  } finally {
    turn.pass();
  }
}
