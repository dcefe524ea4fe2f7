import { describeError, errnoOf } from './files.js';
import { StoreUnavailable } from './types.js';

/** The errno codes of a disk or quota out of space. */
const OUT_OF_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/** Why the journal's writes fail, since when. */
export interface WriteFailure {
  code: string;
  error: string;
  since: number;
}

/**
 * Whether the journal's writes fail, and what ends it. While the disk is out of space a
 * disk all but full still takes short lines (a clock's save), so only a line as long as the
 * shortest that failed (at most 64 KiB), or a checkpoint, ends the failure: else health
 * would say ok between two commits that fail.
 *
 * @example
 * const failures = new WriteFailures({});
 * throw failures.failed(error, bytes); // then, once a line is written: failures.wrote(bytes)
 */
export class WriteFailures {
  failure: WriteFailure | undefined;
  private failedBytes = 0;

  constructor(private readonly told: { onWriteFailed?: (error: Error) => void; onWriteResumed?: () => void }) {}

  /** A line of `bytes` (0: not encoded yet) that could not be written: noted and told; returns the error to throw. */
  failed(error: unknown, bytes: number): StoreUnavailable {
    const code = errnoOf(error);
    this.failure ??= { code, error: describeError(error), since: Date.now() };
    // At most 64 KiB: a large change that failed once (a reset, a bulk create) is not made again, and a disk that takes 64 KiB takes the usual ones.
    if (OUT_OF_SPACE.has(code) && bytes > 0) this.failedBytes = Math.min(this.failedBytes === 0 ? bytes : this.failedBytes, bytes, 64 * 1024);
    this.told.onWriteFailed?.(error as Error);
    return new StoreUnavailable(code, { cause: error });
  }

  /** A line of `bytes` was written: it ends a failure it is as long as. */
  wrote(bytes: number): void {
    if (this.failure !== undefined && bytes >= this.failedBytes) this.resumed();
  }

  /** A checkpoint rewrote the data file: that ends a failure for want of space, as the disk took far more than any line. */
  checkpointed(): void {
    if (this.failure !== undefined && OUT_OF_SPACE.has(this.failure.code)) this.resumed();
  }

  private resumed(): void {
    this.failure = undefined;
    this.failedBytes = 0;
    this.told.onWriteResumed?.();
  }
}
