import { readFileSync, readlinkSync } from 'node:fs';

/**
 * The start time of a live process, or null where it cannot be read (no /proc).
 * Field 22 of /proc/PID/stat counts clock ticks since boot; with the boot id it names
 * one process for good, so a pid reused after a crash is not mistaken for the holder.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return `${bootId()}:${ticks}`;
  } catch {
    return null;
  }
}

let cachedBootId: string | undefined;
let cachedNamespace: string | null | undefined;

/** This process's pid namespace (`pid:[inode]`), or null where it cannot be read (no /proc). */
export function pidNamespace(): string | null {
  if (cachedNamespace === undefined) {
    try {
      cachedNamespace = readlinkSync('/proc/self/ns/pid');
    } catch {
      cachedNamespace = null;
    }
  }
  return cachedNamespace;
}

export function bootId(): string {
  cachedBootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return cachedBootId;
}

/**
 * Whether the process has ended and waits to be reaped: its main thread in state Z (or X)
 * with no other thread left (/proc/PID/status). A sandbox killed with SIGKILL stays such
 * a zombie until its parent waits for it (a shell or a process manager slow to reap): it
 * has closed its files and never writes again, but it still answers `kill(pid, 0)`. A
 * main thread in state Z beside threads still running is a process still alive (Node's
 * never ends that way, but the lock does not rely on it). False where /proc cannot be read.
 */
export function processEnded(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1]);
    return (state === 'Z' || state === 'X') && threads <= 1;
  } catch {
    return false;
  }
}

/** Whether a process of this pid namespace is alive (kill(pid, 0) answers), another user's included. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}
