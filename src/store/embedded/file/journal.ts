import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, truncateSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { describeError, remedyFor, writeAllSync } from './files.js';
import { readLines } from './lines.js';
import { commitProblem } from './schema-check.js';
import { DataFileError, type JournalOp, type StoreFileSystem } from './types.js';

/** Where a journal was found damaged. `line` 0: the damage is the segment as a whole (cut short, missing). */
interface JournalDamage {
  generation: number;
  path: string;
  what: string;
  /** The first line whose commit is lost (those before it were replayed); 0 when the segment is lost whole. */
  line: number;
}

/** What a salvaging replay set aside: the segments moved into `folder`, and the damage that made it. */
export interface JournalSalvage {
  folder: string;
  damage: string;
  moved: string[];
  /** The first line of the damaged segment not replayed (0: the damage is the segment as a whole). */
  fromLine: number;
}

/** The line cut short a replay dropped from the end of the newest segment: kept up to byte `end` of `size`. */
export interface JournalTornTail {
  path: string;
  end: number;
  size: number;
}

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
  /** The segment `open` opened and its size then: a refused start cuts it back to that (see `abandon`). */
  private opened: { generation: number; size: number } | undefined;

  constructor(
    private readonly dataPath: string,
    private generation: number,
    private readonly options: { fsync: boolean; segmentBytes: number; fs: StoreFileSystem },
  ) {}

  get currentGeneration(): number {
    return this.generation;
  }

  /** The segment appends go to. */
  get currentPath(): string {
    return this.pathOf(this.generation);
  }

  /**
   * Reads every segment from generation `from` on, in order, line by line, and hands
   * each op to `apply`. Only the newest segment may end in a line with no newline: a
   * write cut short (by a crash or a full disk), never acknowledged, so it is skipped and
   * cut off, and later appends start a clean line. Anything else is damage: a complete
   * line that is not a commit (not JSON, not a list of changes, a change putting a record
   * `recordProblem` refuses), an older segment cut short (it was closed whole, so the
   * cut lost acknowledged commits), or a segment missing between the data file's
   * generation and the newest. Damage stops the replay with a DataFileError naming the
   * segment, every file untouched; with `salvage`, the replay keeps the commits before the
   * damage, plans to move the damaged segment and every later one into a dated folder beside
   * the data file (`setAside` moves them once the start is accepted), and says what it sets aside (the caller then writes a checkpoint, since the
   * kept commits of a moved segment are in memory only). Returns the commits replayed. Once `signal` is aborted the replay
   * throws its reason at the next line.
   */
  async replay(from: number, apply: (op: JournalOp) => void, options: { salvage?: boolean; signal?: AbortSignal | undefined } = {}): Promise<{ commits: number; salvaged?: JournalSalvage; torn?: JournalTornTail }> {
    let commits = 0;
    let torn: JournalTornTail | undefined;
    const segments = this.segments().filter((segment) => segment.generation >= from);
    for (const [index, { generation, path }] of segments.entries()) {
      const expected = index === 0 ? from : segments[index - 1]!.generation + 1;
      if (generation !== expected) {
        const missing = this.pathOf(expected);
        const damage = { generation: expected, path: missing, what: `is missing, while ${basename(path)} after it is there`, line: 0 };
        return { commits, salvaged: this.planSalvage(damage, options.salvage) };
      }
      let damage: JournalDamage | undefined;
      /** The number of the last whole line read: a segment cut short lost the lines after it. */
      let lastLine = 0;
      const read = readLines(path, (line, number) => {
        options.signal?.throwIfAborted();
        lastLine = number;
        if (line === '' || damage !== undefined) return;
        let parsed: JournalOp | JournalOp[];
        try {
          parsed = JSON.parse(line) as JournalOp | JournalOp[];
        } catch (error) {
          damage = { generation, path, what: `is damaged at line ${number}: ${(error as Error).message}`, line: number };
          return;
        }
        const problem = commitProblem(parsed);
        if (problem !== undefined) {
          damage = { generation, path, what: `is damaged at line ${number}: ${problem}`, line: number };
          return;
        }
        if (Array.isArray(parsed)) parsed.forEach(apply);
        else apply(parsed); // a line of sandbox 0.1.0: one op
        commits += 1;
      });
      const { end, size } = await read.catch((error: unknown) => {
        // A file that cannot be read (a mode that refuses this user, a directory) is named; anything else is not the file's.
        if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error;
        const described = describeError(error);
        throw new DataFileError(`Cannot read the journal ${path} (${described}). ${remedyFor(described, dirname(path))}`, { cause: error });
      });
      const newest = index === segments.length - 1;
      if (damage === undefined && end < size && !newest) {
        damage = { generation, path, what: `ends in a line cut short at byte ${end} of ${size}, and only the newest segment may (it is closed whole before the next begins)`, line: lastLine + 1 };
      }
      if (damage !== undefined) return { commits, salvaged: this.planSalvage(damage, options.salvage) };
      if (end < size) {
        truncateSync(path, end);
        torn = { path, end, size };
      }
      this.bytesSinceCheckpoint += end;
      this.generation = Math.max(this.generation, generation);
    }
    return torn ? { commits, torn } : { commits };
  }

  /**
   * Without `salvage`, refuses the start naming the damage. With it, plans to move the
   * damaged segment and every later one into `<data>.damaged-<time>/` and to go on at the
   * damaged segment's generation, in a fresh segment; `setAside` moves them once the start
   * is accepted (a start refused after the replay leaves every file where it was).
   */
  private planSalvage(damage: JournalDamage, salvage: boolean | undefined): JournalSalvage {
    if (!salvage) {
      throw new DataFileError(
        `The journal ${damage.path} ${damage.what}. Nothing was changed: the data file and its journal segments are as they were. ` +
          'Repair or restore it, or start once with --salvage-journal to set it and the segments after it aside ' +
          'into a dated folder beside the data file and start from what is intact (the commits after the damage are then lost, and logged).',
      );
    }
    const dir = dirname(this.dataPath);
    const folder = join(dir, `${basename(this.dataPath)}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    const moved = this.segments().filter((segment) => segment.generation >= damage.generation);
    this.generation = damage.generation;
    this.bytesSinceCheckpoint = 0;
    return { folder, damage: `${basename(damage.path)} ${damage.what}`, moved: moved.map((segment) => basename(segment.path)), fromLine: damage.line };
  }
  /** Moves the segments a salvaging replay set aside into their folder. Before `open`: the fresh segment takes the first one's generation. */
  setAside(salvage: JournalSalvage): void {
    const dir = dirname(this.dataPath);
    mkdirSync(salvage.folder, { mode: 0o700 });
    for (const name of salvage.moved) renameSync(join(dir, name), join(salvage.folder, name));
  }

  /** Opens the current segment for appending (mode 0600). */
  open(): void {
    this.fd = this.openSegment(this.generation);
    this.size = fstatSync(this.fd).size;
    this.opened = { generation: this.generation, size: this.size };
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
   * Closes the journal, cutting the segment `open` opened back to the size it had then (the
   * lines of the start's own writes), and removes the segments it created that are still
   * empty: for a start refused after the journal was opened (a migrated file that could not
   * be written, a start-time write the disk refused), which is to leave the files as they were.
   */
  abandon(): void {
    try {
      if (this.fd !== undefined && this.opened?.generation === this.generation && (this.size > this.opened.size || this.torn)) this.options.fs.ftruncateSync(this.fd, this.opened.size);
    } catch {
      // Left longer: its lines are whole commits, replayed by the next start.
    }
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
