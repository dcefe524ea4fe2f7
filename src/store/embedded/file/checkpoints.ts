import type { Low } from 'lowdb';
import { formatDuration } from '../../../shared/index.js';
import { describeError } from './files.js';
import type { Journal } from './journal.js';
import type { DataFileLock } from './lock.js';
import { RecordMap } from './record-map.js';
import { RecordsInMemory, type InMemoryOptions } from './records-in-memory.js';
import { CheckpointAborted, SnapshotFile } from './snapshot-file.js';
import type { JournaledFileData } from './types.js';

const MiB = 2 ** 20;

/** What checkpoints take of the journaled file's options (see JournaledFileOptions). */
export interface CheckpointOptions extends InMemoryOptions {
  checkpointBytes?: number;
  checkpointRetryMs?: number;
}

/**
 * Records in memory that checkpoints write to the data file: the whole file rewritten in
 * the background from memory (each record as last committed), after which the journal
 * segments it holds are dropped. One runs at a time; one asked for meanwhile runs after
 * it. The journaled file commits, and starts one when the journal has grown enough.
 */
export abstract class CheckpointedRecords<Options extends CheckpointOptions> extends RecordsInMemory<Options> {
  /** The checkpoint running, if any. */
  protected checkpointing: Promise<void> | undefined;
  private nextCheckpoint: Promise<void> | undefined;
  private checkpointRetryAt = 0;
  /** Set once close() starts: no checkpoint starts by itself any more. */
  protected closing = false;
  /** Set once closed: nothing is committed or checkpointed any more. */
  protected closed = false;
  /** Set by close() and by a lost lock: a checkpoint in progress stops at its next chunk. */
  protected stopCheckpoint = false;
  /** Set when another sandbox took the lock: nothing is written any more. */
  protected lockLost = false;
  protected checkpointError: string | undefined;

  protected constructor(
    db: Low<JournaledFileData>,
    protected readonly journal: Journal | undefined,
    protected readonly lock: DataFileLock | undefined,
    options: Options,
  ) {
    super(db, options);
  }

  /**
   * Rewrites the data file from memory and drops the journal segments it now holds;
   * resolves once the file holds every change committed before the call. A
   * failure leaves the old data file and the journal as they were; it is reported to
   * `onError` and in `health()`, and the next automatic checkpoint waits `checkpointRetryMs`.
   * `atStart`: the start's own write, whose failure refuses the start, which says why (no retry is to come).
   */
  checkpoint(atStart = false): Promise<void> {
    const journal = this.journal;
    if (!journal || this.closed || this.lockLost) return Promise.resolve();
    if (this.checkpointing) {
      // One is running and may have passed records committed since: run one more after it.
      this.nextCheckpoint ??= this.checkpointing.then(() => {
        this.nextCheckpoint = undefined;
        return this.checkpoint();
      });
      return this.nextCheckpoint;
    }
    this.checkpointing = this.writeCheckpoint(journal, atStart).finally(() => {
      this.checkpointing = undefined;
    });
    return this.checkpointing;
  }

  /** Whether the journal has grown enough for a checkpoint to start by itself (none running, none failed lately). */
  protected shouldCheckpoint(): boolean {
    const journal = this.journal!;
    if (this.checkpointing || this.closing || Date.now() < this.checkpointRetryAt) return false;
    return journal.bytesSinceCheckpoint >= Math.max(this.options.checkpointBytes ?? 64 * MiB, this.file()?.bytes ?? 0);
  }

  /** Told when a checkpoint rewrote the data file: the disk took a whole copy of the records. */
  protected checkpointed(): void {}

  private async writeCheckpoint(journal: Journal, atStart: boolean): Promise<void> {
    try {
      this.commit();
      const generation = journal.rotate();
      const data = { ...this.db.data, journal_generation: generation };
      await this.file()!.writeFrom(data, {
        chunksOf: (_name, records) => (records instanceof RecordMap ? this.committedChunks(records) : [{ keys: Object.keys(records) }]),
        valueOf: (name, key) => this.committedValue(name, key),
        aborted: () => this.stopCheckpoint || this.lockLost,
        // Read from the lock file itself: a loss the next beat would find must not let this file replace the new holder's.
        mayReplace: () => !this.lockLost && (this.lock?.held() ?? true),
      });
      this.db.data.journal_generation = generation;
      if (this.lock !== undefined && !this.lock.held()) return;
      await journal.removeBefore(generation);
      this.checkpointError = undefined;
      this.checkpointed();
    } catch (error) {
      if (error instanceof CheckpointAborted) return;
      this.checkpointError = describeError(error);
      const retryMs = this.options.checkpointRetryMs ?? 30_000;
      this.checkpointRetryAt = Date.now() + retryMs;
      if (atStart) return;
      // Nothing is lost: the commits are in the journal, which a start replays. Said so, for an operator reading "ENOSPC" at a stop.
      const path = this.file()?.path ?? 'the data file';
      this.options.onError?.(
        Object.assign(
          new Error(`The checkpoint could not rewrite ${path} (${this.checkpointError}): nothing is lost, every change is in the journal beside it (replayed at the next start); ${this.closing ? 'the stop ends without it' : `the next checkpoint tries again in ${formatDuration(retryMs)}`}.`, { cause: error }),
          { code: (error as NodeJS.ErrnoException).code },
        ),
      );
    }
  }

  /** The data file, or undefined for a file kept in memory only. */
  protected file(): SnapshotFile | undefined {
    return this.db.adapter instanceof SnapshotFile ? this.db.adapter : undefined;
  }
}
