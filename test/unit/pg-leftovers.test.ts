import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeLeftovers } from '../support/postgres.js';

/** A pid that was a process and has ended. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('test PostgreSQL servers left behind by a killed run', () => {
  const parents: string[] = [];
  afterEach(() => {
    for (const parent of parents.splice(0)) rmSync(parent, { recursive: true, force: true });
  });

  /** A server folder as startPostgres leaves it: its test process's pid, and the server's if `server` is given. */
  function serverFolder(parent: string, name: string, owner: number | undefined, server?: number): string {
    const dir = join(parent, `sandbox-pg-${name}`);
    mkdirSync(join(dir, 'data'), { recursive: true });
    if (owner !== undefined) writeFileSync(join(dir, 'owner.pid'), `${owner}\n`);
    if (server !== undefined) writeFileSync(join(dir, 'data', 'postmaster.pid'), `${server}\n/some/dir\n`);
    return dir;
  }

  it('removes only the folders whose test process and server are both gone', () => {
    const parent = mkdtempSync(join(tmpdir(), 'leftovers-'));
    parents.push(parent);
    const gone = endedPid();
    const killedRun = serverFolder(parent, 'killed', gone, endedPid());
    const stoppedServer = serverFolder(parent, 'stopped', gone);
    const liveRun = serverFolder(parent, 'live', process.pid);
    const serverStillUp = serverFolder(parent, 'up', gone, process.pid);
    const unknown = serverFolder(parent, 'unknown', undefined);
    const other = join(parent, 'something-else');
    mkdirSync(other);
    writeFileSync(join(other, 'owner.pid'), `${gone}\n`);

    expect(removeLeftovers(parent).sort()).toEqual([killedRun, stoppedServer].sort());
    expect(existsSync(killedRun)).toBe(false);
    expect(existsSync(stoppedServer)).toBe(false);
    for (const kept of [liveRun, serverStillUp, unknown, other]) expect(existsSync(kept)).toBe(true);
  });
});
