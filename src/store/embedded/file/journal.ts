import { closeSync, existsSync, fstatSync, openSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeAllSync } from './files.js';
import { readLines } from './lines.js';
import { commitProblem } from './schema-check.js';
import { DataFileError, type JournalOp, type StoreFileSystem } from './types.js';

/**
 * The append-only journal beside the data file, in segments
 * `sandbox.json.wal.<generation>`. Every commit is appended as one JSON line (an array
 * of ops) before the request that made it is answered, so an acknowledged change
 * survives a crash of the process, and a commit cut short is dropped whole at replay.
 *
 * A segment is closed and the next generation opened once it reaches `segmentBytes`,
 * and at each checkpoint; the data file names the first generation it does not hold,
 * and a checkpoint removes the segments before it.
 */
export class Journal {
  private fd: number | undefined;
  /** Size of the current segment: every byte up to here is a complete line. */
  private size = 0;
  /** A failed write left bytes past `size` that are not cut off yet: nothing may follow them. */
  private torn = false;
  /** Bytes in every segment at or after the data file's generation. */
  bytesSinceCheckpoint = 0;
  /** The segments this process created (see `abandon`). */
  private readonly created = new Set<string>();

  constructor(
    private readonly dataPath: string,
    private generation: number,
    private readonly options: { fsync: boolean; segmentBytes: number; fs: StoreFileSystem },
  ) {}

  get currentGeneration(): number {
    return this.generation;
  }

  /**
   * Reads every segment from generation `from` on, in order, line by line, and hands
   * each op to `apply`. A last line with no newline is a write cut short (by a crash or
   * a full disk), never acknowledged: it is skipped and cut off, so later appends start
   * a clean line. A complete line that is not a commit (not JSON, not a list of changes,
   * a change putting a record `recordProblem` refuses) stops the replay with a
   * DataFileError naming the segment and line. Returns the number of commits replayed.
   */
  async replay(from: number, apply: (op: JournalOp) => void): Promise<number> {
    let commits = 0;
    for (const { generation, path } of this.segments()) {
      if (generation < from) continue;
      const { end, size } = await readLines(path, (line, number) => {
        if (line === '') return;
        const damaged = (what: string) =>
          new DataFileError(
            `The journal ${path} is damaged at line ${number}: ${what}. ` +
              'It was left untouched: move it away to start without its changes, or start with another --data file.',
          );
        let parsed: JournalOp | JournalOp[];
        try {
          parsed = JSON.parse(line) as JournalOp | JournalOp[];
        } catch (error) {
          throw damaged((error as Error).message);
        }
        const problem = commitProblem(parsed);
        if (problem !== undefined) throw damaged(problem);
        if (Array.isArray(parsed)) parsed.forEach(apply);
        else apply(parsed); // a line of sandbox 0.1.0: one op
        commits += 1;
      });
      if (end < size) truncateSync(path, end);
      this.bytesSinceCheckpoint += end;
      this.generation = Math.max(this.generation, generation);
    }
    return commits;
  }

  /** Opens the current segment for appending (mode 0600). */
  open(): void {
    this.fd = this.openSegment(this.generation);
    this.size = fstatSync(this.fd).size;
  }

  /**
   * Appends complete lines, and fsyncs them with the fsync option. On a failure (ENOSPC,
   * EIO, ...) the segment is cut back to where it was before rethrowing, so the next
   * append never follows a torn line; if even that fails, every later append tries it
   * first and fails until it works. `lines` is written before this returns and not kept:
   * the store hands in a view of a buffer it reuses for the next line.
   */
  append(lines: Buffer): void {
    if (this.fd === undefined) this.open();
    this.cutTornTail();
    if (this.size > 0 && this.size + lines.length > this.options.segmentBytes) this.rotate();
    const fd = this.fd!;
    try {
      writeAllSync(this.options.fs, fd, lines);
      if (this.options.fsync) this.options.fs.fsyncSync(fd);
    } catch (error) {
      this.torn = true;
      try {
        this.cutTornTail();
      } catch {
        // Still torn: the next append retries the cut before writing anything.
      }
      throw error;
    }
    this.size += lines.length;
    this.bytesSinceCheckpoint += lines.length;
  }

  /** Starts a new segment; later appends go there. Returns its generation. Keeps the current one if the new one cannot be opened. */
  rotate(): number {
    this.cutTornTail();
    const fd = this.openSegment(this.generation + 1);
    this.close();
    this.fd = fd;
    this.generation += 1;
    this.size = fstatSync(fd).size;
    return this.generation;
  }

  /**
   * A checkpoint now holds everything before `generation`: remove those segments. Off the
   * event loop: unlinking a big segment takes the file system a while.
   */
  async removeBefore(generation: number): Promise<void> {
    for (const segment of this.segments()) {
      if (segment.generation >= generation) continue;
      await rm(segment.path, { force: true });
    }
    this.bytesSinceCheckpoint = this.segments().reduce((sum, s) => sum + (s.generation >= generation ? statSync(s.path).size : 0), 0);
  }

  /** Makes appended lines durable (fsync), for a clean stop. */
  flush(): void {
    if (this.fd !== undefined && !this.torn) this.options.fs.fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * Closes the journal and removes the segments it created that are still empty: for a
   * start refused after the journal was opened (a migrated file that could not be
   * written), which is to leave the files as they were.
   */
  abandon(): void {
    this.close();
    for (const path of this.created) {
      try {
        if (statSync(path).size === 0) rmSync(path, { force: true });
      } catch {
        // Gone already: nothing to remove.
      }
    }
  }

  /** Opens a segment for appending (mode 0600), noting it when this opening creates it. */
  private openSegment(generation: number): number {
    const path = this.pathOf(generation);
    const fresh = !existsSync(path);
    const fd = openSync(path, 'a', 0o600);
    if (fresh) this.created.add(path);
    return fd;
  }

  private cutTornTail(): void {
    if (!this.torn || this.fd === undefined) return;
    this.options.fs.ftruncateSync(this.fd, this.size);
    this.torn = false;
  }

  private pathOf(generation: number): string {
    return `${this.dataPath}.wal.${generation}`;
  }

  /** The journal's segments on disk, oldest first. */
  segments(): Array<{ generation: number; path: string }> {
    const dir = dirname(this.dataPath);
    const prefix = `${basename(this.dataPath)}.wal.`;
    return readdirSync(dir)
      .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
      .map((name) => ({ generation: Number(name.slice(prefix.length)), path: join(dir, name) }))
      .sort((a, b) => a.generation - b.generation);
  }
}
