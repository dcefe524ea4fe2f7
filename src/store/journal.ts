import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DataFileError, type JournalOp } from './types.js';

/**
 * The append-only journal beside the data file (`sandbox.json.wal.<generation>`).
 * Every change is appended as one JSON line before the request that made it is
 * answered, so an acknowledged change survives a crash of the process. A checkpoint
 * moves to a new generation; older generations are removed once the data file
 * holds them.
 */
export class Journal {
  private fd: number | undefined;
  bytes = 0;

  constructor(
    private readonly dataPath: string,
    private generation: number,
    private readonly fsync: boolean,
  ) {}

  get currentGeneration(): number {
    return this.generation;
  }

  /** Reads every journal generation from `from` on, in order, and hands each op to `apply`. */
  replay(from: number, apply: (op: JournalOp) => void): number {
    let count = 0;
    for (const { generation, path } of this.files()) {
      if (generation < from) continue;
      const text = readFileSync(path, 'utf8');
      const lines = text.split('\n');
      lines.forEach((line, index) => {
        if (line === '' || index === lines.length - 1) return;
        try {
          apply(JSON.parse(line) as JournalOp);
          count += 1;
        } catch (error) {
          throw new DataFileError(`The journal ${path} is damaged at line ${index + 1}: ${(error as Error).message}`);
        }
      });
      // Every append ends with a newline: text after the last one is a write cut short by
      // a crash, never acknowledged. Cut it off, so the next append starts a clean line.
      const end = text.lastIndexOf('\n') + 1;
      if (end < text.length) truncateSync(path, Buffer.byteLength(text.slice(0, end)));
      this.generation = Math.max(this.generation, generation);
    }
    return count;
  }

  open(): void {
    this.fd = openSync(this.pathOf(this.generation), 'a');
  }

  append(lines: string): void {
    if (this.fd === undefined) this.open();
    writeSync(this.fd!, lines);
    if (this.fsync) fsyncSync(this.fd!);
    this.bytes += Buffer.byteLength(lines);
  }

  /** Starts a new generation; later appends go there. Returns the new generation. */
  rotate(): number {
    this.close();
    this.generation += 1;
    this.bytes = 0;
    this.open();
    return this.generation;
  }

  removeBefore(generation: number): void {
    for (const file of this.files()) if (file.generation < generation) rmSync(file.path, { force: true });
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private pathOf(generation: number): string {
    return `${this.dataPath}.wal.${generation}`;
  }

  private files(): Array<{ generation: number; path: string }> {
    const dir = dirname(this.dataPath);
    const prefix = `${basename(this.dataPath)}.wal.`;
    return readdirSync(dir)
      .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
      .map((name) => ({ generation: Number(name.slice(prefix.length)), path: join(dir, name) }))
      .sort((a, b) => a.generation - b.generation);
  }
}
