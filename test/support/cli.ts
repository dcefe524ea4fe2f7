import { spawn, type ChildProcess } from 'node:child_process';
import { databaseFor, onPostgres } from './store-kind.js';

export interface RunningCli {
  url: string;
  process: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once the output holds `text` (or after `timeoutMs`; the caller's assertion then tells). */
  printed(text: string, timeoutMs?: number): Promise<void>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `shipping-sandbox` from source as a child process; `wrapper` runs it (e.g. `unshare ...`). */
export function spawnCli(args: string[], env: Record<string, string> = {}, wrapper: string[] = []): ChildProcess {
  const command = [...wrapper, process.execPath, '--import', 'tsx', 'src/cli.ts', ...args];
  return spawn(command[0]!, command.slice(1), {
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * The arguments on this run's store: on a PostgreSQL run (test:postgres) `--data FILE`
 * becomes `--database-url` of the database that stands for FILE (the same file, the
 * same database, so a restart finds its data).
 */
async function onThisRunsStore(args: string[]): Promise<string[]> {
  const at = args.indexOf('--data');
  if (!onPostgres || at < 0 || args.includes('--database-url')) return args;
  const { url } = await databaseFor(args[at + 1]);
  return [...args.slice(0, at), '--database-url', url, ...args.slice(at + 2)];
}

/** Starts the CLI and resolves once it prints `listening on http://...`. */
export async function startCli(args: string[], env: Record<string, string> = {}, wrapper: string[] = []): Promise<RunningCli> {
  const child = spawnCli(await onThisRunsStore(args), env, wrapper);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        resolve({
          url: match[1]!,
          process: child,
          output: () => output,
          printed: async (text, timeoutMs = 10_000) => {
            for (const begun = Date.now(); !output.includes(text) && Date.now() - begun < timeoutMs; ) await new Promise((wake) => setTimeout(wake, 50));
          },
          stop: (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`the CLI exited (${code}) before listening:\n${output}`)));
  });
}

/** Runs the CLI to its end and returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string> = {}, wrapper: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(await onThisRunsStore(args), env, wrapper);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  // 'close', not 'exit': output written just before exiting may arrive after the exit event.
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}
