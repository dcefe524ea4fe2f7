import { nodeFileSystem } from '../../src/store/embedded/file/files.js';
import type { StoreFileSystem } from '../../src/store/embedded/file/types.js';

const fault = (code: string) => Object.assign(new Error(`${code}: injected, write`), { code });

/**
 * The real file system with a switch: while `failing` names an errno code, every write
 * fails with it, after a short write of half the bytes as a disk that fills up mid-write
 * does, and so does every fsync. `truncateFails` makes cutting back a torn line fail too.
 * `failingAbove` fails only writes longer than that many bytes, with ENOSPC: a disk all
 * but full, which still takes a clock's small save and not a job's commit.
 */
export class FaultyFileSystem implements StoreFileSystem {
  failing: string | undefined;
  failingAbove: number | undefined;
  truncateFails = false;
  /** Writes that failed. */
  failures = 0;
  private half = new WeakSet<Uint8Array>();

  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number {
    if (this.fails(length)) return this.torn(buffer, length, () => nodeFileSystem.writeSync(fd, buffer, offset, Math.floor(length / 2)));
    return nodeFileSystem.writeSync(fd, buffer, offset, length);
  }

  async write(fd: number, buffer: Uint8Array, offset: number, length: number): Promise<number> {
    if (this.fails(length)) return this.torn(buffer, length, () => nodeFileSystem.writeSync(fd, buffer, offset, Math.floor(length / 2)));
    return nodeFileSystem.write(fd, buffer, offset, length);
  }

  fsyncSync(fd: number): void {
    if (this.failing) throw fault(this.failing);
    nodeFileSystem.fsyncSync(fd);
  }

  async fsync(fd: number): Promise<void> {
    if (this.failing) throw fault(this.failing);
    return nodeFileSystem.fsync(fd);
  }

  ftruncateSync(fd: number, length: number): void {
    if (this.truncateFails) throw fault('EIO');
    nodeFileSystem.ftruncateSync(fd, length);
  }

  private fails(length: number): boolean {
    return this.failing !== undefined || (this.failingAbove !== undefined && length > this.failingAbove);
  }

  /** The first write of a buffer gets half of it through; the next one fails. */
  private torn(buffer: Uint8Array, length: number, writeHalf: () => number): number {
    if (!this.half.has(buffer) && length > 1) {
      this.half.add(buffer);
      return writeHalf();
    }
    this.failures += 1;
    throw fault(this.failing ?? 'ENOSPC');
  }
}
