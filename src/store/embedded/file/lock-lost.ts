import type { LockLoss } from './lock.js';
import type { LockHolder } from './lock-holder.js';

/** The code of `StoreUnavailable` (and of the store's health) once another sandbox took the data file's lock. */
export const LOCK_LOST = 'ELOCKLOST';

/** Why this sandbox stops writing to the data file: whom the lock names now, and what to do. */
export const lockTakenMessage = (path: string, by: LockHolder | undefined, why: LockLoss): string =>
  (why === 'taken'
    ? `Another sandbox took the lock of the data file ${path}${by ? ` (pid ${by.pid} on host ${by.host}, since ${by.since})` : ''} while this one was not refreshing it`
    : why === 'unrefreshed'
      ? `The lock of the data file ${path} could not be refreshed for seconds, so another sandbox may take it over`
      : why === 'unreadable'
        ? `The lock of the data file ${path} could not be read for seconds`
        : `The lock of the data file ${path} was removed`) +
  ': this sandbox writes nothing more to the data file, and every change answers 503. Stop it; if another sandbox serves the data file now, leave that one running, else start this one again.';
