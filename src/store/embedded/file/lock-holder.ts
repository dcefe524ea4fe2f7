import { hostname } from 'node:os';
import { pidAlive, pidNamespace, processEnded, processStart } from './process-identity.js';

/** Who holds a data file, as its lock file `<data>.lock` records it. */
export interface LockHolder {
  pid: number;
  host: string;
  /** The holder's process start time (Linux: boot id and start ticks), telling a reused pid apart; null where unknown. */
  start: string | null;
  /**
   * The holder's pid namespace (Linux: `pid:[inode]`); null where unknown, absent in locks
   * of earlier sandboxes. A holder in another one (another container with the same
   * hostname) cannot be checked by its pid: its heartbeat tells instead.
   */
  ns?: string | null;
  /** When the lock was taken, ISO 8601. */
  since: string;
  /**
   * The data file's real path when the lock was taken; absent in locks of earlier sandboxes.
   * A lock that names another path was copied with its folder (a backup, a snapshot taken
   * while its sandbox ran), or the folder is mounted at another path here.
   */
  path?: string;
  /** Unique per acquisition: a take-over replaces exactly the lock it judged stale. */
  id: string;
  /** Set on a lock file a sandbox did not write (not JSON, or without a holder's fields): never judged stale. */
  foreign?: true;
}

/**
 * Whether the holder's pid can be checked from here: it is on this host, in this pid
 * namespace and this boot. A holder in another pid namespace (another container given
 * the same hostname: both are pid 1; this container before a restart) or on another
 * machine of the same hostname (its namespaces have the same numbers; its boot id
 * differs) cannot be: its heartbeat tells instead. A lock that recorded no namespace (an
 * earlier sandbox's, or no /proc) is judged by its pid alone.
 */
export function pidCheckable(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  const own = pidNamespace();
  const sameNamespace = holder.ns === undefined || holder.ns === null || own === null || holder.ns === own;
  return sameNamespace && (holder.ns === undefined || sameBoot(holder));
}

/** Whether the holder's recorded start time is of this boot (unknown counts as this one). */
function sameBoot(holder: LockHolder): boolean {
  if (holder.start === null) return true;
  const own = processStart(process.pid);
  return own === null || holder.start.slice(0, holder.start.lastIndexOf(':')) === own.slice(0, own.lastIndexOf(':'));
}

/**
 * Whether the holder is certainly gone: on this host and in this pid namespace, and its
 * pid is not alive, has ended and waits to be reaped (a zombie), or is alive with another
 * start time (pid reuse). A holder on another host cannot be checked and counts as live;
 * one in another pid namespace of this host is judged by its heartbeat (see
 * `DataFileLock.acquire`). A holder that merely stalls stays live: no timeout.
 */
export function isStale(holder: LockHolder): boolean {
  if (!pidCheckable(holder)) return false;
  if (!pidAlive(holder.pid) || processEnded(holder.pid)) return true;
  if (holder.start === null) return false;
  const start = processStart(holder.pid);
  return start !== null && start !== holder.start;
}
