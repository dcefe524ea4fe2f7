#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { Command, CommanderError } from 'commander';
import { VERSION, formatDuration, mask } from './shared/index.js';
import { optionsOf, program, OPTIONS, OptionError, shownDatabase, startFailure, type ResolvedOptions, type SandboxOptions } from './config/index.js';
import { createSandbox, type Sandbox } from './app/index.js';
import { webhookBannerLine } from './webhooks/index.js';
import {
  executeList,
  executeListen,
  executeRecover,
  executeReport,
  executeTrigger,
  listenProgram,
  listProgram,
  recoverProgram,
  reportProgram,
  triggerProgram,
  unknownDeliveriesCommand,
  type ListCommand,
  type ListenCommand,
  type RecoverCommand,
  type ReportCommand,
  type TriggerCommand,
} from './client/index.js';

// A long-running sandbox holds its whole store in memory. V8's default lets the old
// space grow to several times the live data between full collections; 75% (the default
// of --heap-growth) keeps its limit under twice the live data (see
// docs/decisions/0001-journaled-store.md). While the data file loads, though, nearly
// everything allocated stays live: each full collection then only finds the heap grown,
// and a large file would pay for many of them. The heap grows by 300% until the sandbox listens, then by --heap-growth. A
// --heap-growing-percent given to node itself wins (node refuses it in NODE_OPTIONS; V8
// reads --heap_growing_percent as the same flag).
const tuneHeapGrowth = !process.execArgv.some((arg) => arg.replaceAll('_', '-').includes('heap-growing-percent'));
if (tuneHeapGrowth) setFlagsFromString('--heap-growing-percent=300');

/** Signals this close after the first are the same press of Ctrl-C, relayed (see stopAgain); two presses are further apart. */
const SAME_PRESS_MS = 200;

async function main(options: SandboxOptions): Promise<void> {
  // Signals are handled from the start on: a SIGTERM while a large journal replays ends the
  // start (what it opened closed, the lock given back) rather than the process at once.
  const starting = new AbortController();
  let sandbox: Sandbox | undefined;
  let stopping = false;
  let stopAskedAt = 0;
  let hangupWhileStarting = false;
  /** A SIGHUP came (a terminal or ssh session closed): the parent npm gone after it is no stop (see stopWhenNpxIsGone). */
  let hungUp = false;
  const stop = (signal: string) => {
    if (stopping) return stopAgain(signal);
    stopping = true;
    stopAskedAt = performance.now();
    if (!sandbox) return starting.abort(signal);
    const { logger } = sandbox.services;
    logger.info({ signal }, 'stopping');
    const began = performance.now();
    sandbox.close().then(
      // The last line of a stop that ended well: a log read alone (docker logs) shows the drain ended, and when.
      () => {
        logger.info({ signal, ms: Math.round(performance.now() - began) }, 'stopped');
        process.exit(0);
      },
      (error: unknown) => {
        // As at the start: what went wrong is the user's to see in one line, with no stack.
        const message = error instanceof Error ? error.message : String(error);
        logger.error({ err: error }, 'stopping failed');
        const exit = () => {
          process.stderr.write(`shipping-sandbox: stopping failed. ${message}\n`);
          process.exit(1);
        };
        // A stdout nobody reads holds the flush: the stop ends 1 s later all the same.
        setTimeout(exit, 1_000).unref();
        logger.flush(exit);
      },
    );
  };
  /**
   * A signal while the stop goes on. A second Ctrl-C quits at once, as a terminal user
   * expects; another SIGTERM (a process manager's again, a signal to the whole process
   * group after one to the sandbox) lets the stop finish, so the data is made durable
   * and the lock given back. So does a SIGINT within SAME_PRESS_MS of the first: the same
   * Ctrl-C relayed by a wrapper that passes signals on (the tsx command line does) to a
   * process that already had it from the terminal's process group, not a second press.
   */
  const stopAgain = (signal: string) => {
    const logger = sandbox?.services.logger;
    if (signal !== 'SIGINT' || performance.now() - stopAskedAt < SAME_PRESS_MS) return void logger?.info({ signal }, 'already stopping: the stop goes on');
    const exit = () => process.exit(130);
    if (!logger) return exit();
    logger.warn({ signal }, 'stopped at once by a second SIGINT: every acknowledged write is kept (the next start reads the journal); webhook attempts under way are made again after it');
    setTimeout(exit, 500).unref();
    logger.flush(exit);
  };
  // SIGHUP, a daemon's signal to read its configuration again, has nothing to do here (the configuration is read at the
  // start only); one sent by an operator, or by an ssh session that closed, must not end a shared sandbox.
  const hangup = (logger = sandbox?.services.logger) => {
    hungUp = true;
    if (!logger) return void (hangupWhileStarting = true);
    logger.warn({ signal: 'SIGHUP' }, 'SIGHUP ignored: the configuration is read at the start only; restart the sandbox to apply a change');
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGHUP', () => hangup());
  stopWhenNpxIsGone(() => stop('parent gone'), () => hungUp);
  try {
    sandbox = await createSandbox(options, { signal: starting.signal });
  } catch (error) {
    // Stopped during the start: the start logged it, and a stop asked for is no failure.
    if (starting.signal.aborted && error === starting.signal.reason) process.exit(0);
    throw error;
  }
  if (tuneHeapGrowth) setFlagsFromString(`--heap-growing-percent=${sandbox.services.options.heapGrowth}`);
  if (hangupWhileStarting) hangup(sandbox.services.logger);
  // Only a token the sandbox generated (kept in the data file) is printed in full: stdout
  // ends up in `docker logs`, and configured tokens are the operator's to hand out.
  const generated = await sandbox.services.storage.meta.get('default_token');
  const { registry } = sandbox.services;
  const shown = (token: string) => (token === generated ? token : mask(token));
  const notShared = !registry.hasAdmin && registry.clientIds.length === 1;
  const lines = [
    `Shipping Order Sandbox ${VERSION} listening on ${sandbox.url}`,
    ...sandbox.clients.map((c) => `  token:  ${shown(c.token)}  (client ${c.id}, ${c.role})`),
    ...registry.adminTokens.map((t) => `  admin:  ${mask(t)}  (acts for a client named by X-Sandbox-Client)`),
    ...(await Promise.all(registry.clientIds.map((id) => webhookBannerLine(sandbox.services.endpoints, registry.byId(id)!, notShared)))),
    ...targetsBannerLine(sandbox.services.options.webhookTargets),
    sandbox.services.options.databaseUrl !== undefined ? `  data:   ${shownDatabase(sandbox.services.options.databaseUrl)}` : `  data:   ${sandbox.services.options.data}`,
    `  clock:  ${sandbox.clock.mode}${sandbox.clock.mode === 'real' ? ` x${sandbox.services.options.speed}${aheadOfWallTime(sandbox, sandbox.services.options.speed)}` : `, at ${new Date(sandbox.clock.now()).toISOString()}`}`,
    `  docs:   ${browsable(sandbox.url)}/docs   dashboard: ${browsable(sandbox.url)}/dashboard`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The webhook target policy when it restricts anything: a misspelt `public` reads as a one-host allow list, and shows here. */
const targetsBannerLine = (policy: ResolvedOptions['webhookTargets']): string[] =>
  policy.kind === 'any' ? [] : [`  webhook targets: ${policy.text}  (URLs set through the API may point nowhere else; --webhook-targets)`];

/** A URL to open on this machine: one listening on every address (0.0.0.0, ::) is opened at localhost. */
const browsable = (url: string): string => url.replace(/\/\/(0\.0\.0\.0|\[::\])(?=:)/, '//localhost');

/**
 * How far the sandbox's real clock is ahead of the wall clock, for the banner, when the
 * data brought a minute or more of it: a data file keeps the time a fast clock reached,
 * so a restart at wall pace goes on from there, which is easy to forget. What this
 * process's own pace made since it started is not counted, nor a client's own advances
 * (its lead, its own doing, which one partner must not make every banner show).
 */
function aheadOfWallTime(sandbox: Awaited<ReturnType<typeof createSandbox>>, speed: number): string {
  const now = Date.now();
  const lead = sandbox.clock.now() - now;
  const ownPace = Math.max(0, (now - performance.timeOrigin) * (speed - 1));
  return lead - ownPace >= 60_000 ? `, ${formatDuration(lead)} ahead of wall time (kept in the data: no clock moves back)` : '';
}

// A reader that closed the pipe (`report --format html | head -1`) ends the output, not the command: its exit code is the gate's.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});
const out = (text: string) => void process.stdout.write(text);
const err = (text: string) => void process.stderr.write(text);

/** A client command's exit: the code it returned once it is done. */
const exitWith = async (code: Promise<number>) => {
  process.exitCode = await code;
};

/** A client command under the sandbox's command line: its usage errors are thrown (exit 2, see below), not exited on with 1. */
function asClientCommand(command: Command): Command {
  return command.exitOverride().configureOutput({ writeOut: out, writeErr: err });
}

/**
 * Whether npm started this process through a shell that does not pass a SIGTERM on: `npx`
 * (npm exec), or this repository's own `npm start`. Not another package's start script,
 * whose variable every process it starts inherits: one that runs the sandbox in the
 * background and then ends must leave it running.
 */
const startedByNpm = (): boolean =>
  process.env.npm_lifecycle_event === 'npx' || (process.env.npm_lifecycle_event === 'start' && process.env.npm_package_name === 'shipping-sandbox');

/**
 * Calls `stop` once when the npx or `npm start` that started this process is gone. npm runs
 * the bin through `sh -c` and passes a SIGTERM to that shell only, which dies without
 * passing it on: this process is left orphaned (reparented), holding its port and data file.
 * A changed parent pid there means whoever started it was told to stop, so it stops as on
 * SIGTERM; but not after a hang-up (`hungUp`): a terminal or ssh session that closed sends
 * SIGHUP to npm and to this process alike, and the sandbox outlives it as it does any SIGHUP.
 */
function stopWhenNpxIsGone(stop: () => void, hungUp: () => boolean = () => false): void {
  if (!startedByNpm()) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent || hungUp()) return;
    clearInterval(watch);
    stop();
  }, 250).unref();
}

/** Stopped on SIGINT or SIGTERM, or when the npx that started it is gone: `listen` then closes its connection and exits 0. */
function stopOnSignals(): AbortSignal {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  stopWhenNpxIsGone(() => stop.abort());
  return stop.signal;
}

/** The message for a word that is no command. */
const unknownCommand = (word: string): string => `error: unknown command '${word}' (shipping-sandbox --help lists the commands)`;

// `shipping-sandbox [options]` starts a sandbox: the server's command line is a hidden default subcommand, so that
// its flags and variables are read only when it runs (a bad SANDBOX_* variable of the server does not stop `listen`).
// The other subcommands talk to a running sandbox (src/client/, no server code). Positional options: a flag after a
// subcommand's name is the subcommand's. --help shows the server's flags and lists the subcommands.
const serve = program();
serve
  .name('serve')
  .argument('[command...]')
  .action((words: string[]) => (words.length === 0 ? main(optionsOf(serve)) : serve.error(unknownCommand(words[0]!))));
const root = new Command('shipping-sandbox')
  .description(serve.description())
  .enablePositionalOptions()
  .configureHelp({ visibleOptions: () => serve.createHelp().visibleOptions(serve) })
  .addCommand(serve, { isDefault: true, hidden: true });
root.addCommand(asClientCommand(reportProgram('report').action((options: ReportCommand) => exitWith(executeReport(options, out, err)))));
root.addCommand(asClientCommand(triggerProgram('trigger').action((event: string, options: TriggerCommand) => exitWith(executeTrigger(event, options, out, err)))));
root.addCommand(
  asClientCommand(
    new Command('deliveries')
      .summary("list or recover a client's webhook deliveries (deliveries list, deliveries recover)")
      .description("Lists or recovers a sandbox client's webhook deliveries.")
      // Commander's own message would name neither subcommand.
      .on('command:*', ([command]: string[]) => {
        err(unknownDeliveriesCommand(command));
        process.exitCode = 2;
      })
      .addCommand(asClientCommand(listProgram('list').action((options: ListCommand) => exitWith(executeList(options, out, err)))))
      .addCommand(asClientCommand(recoverProgram('recover').action((options: RecoverCommand) => exitWith(executeRecover(options, out, err))))),
  ),
);
root.addCommand(
  asClientCommand(
    listenProgram('listen').action(async (options: ListenCommand) => {
      // Exits at once when done: a kept-alive connection to the local receiver must not hold a stopped listener up.
      process.exit(await executeListen(options, out, err, process.env, stopOnSignals()));
    }),
  ),
);

// A first word that is no command (`delivery list`, `bogus --url X`) is named as such, before
// the server's flags would refuse the command's own (`unknown option '--url'`).
const first = process.argv[2];
const commands = new Set([...root.commands.map((command) => command.name()), 'help']);
if (first !== undefined && !first.startsWith('-') && !commands.has(first)) serve.error(unknownCommand(first));
// `deliveries --url X` is a subcommand left out, not an option the group lacks: named as such.
const second = process.argv[3];
if (first === 'deliveries' && second?.startsWith('-') && second !== '--help' && second !== '-h') {
  err(unknownDeliveriesCommand(second));
  process.exit(2);
}

/** An option as the user gave it: its variable when the command line does not name its flag and the variable is set, else its flag. */
function givenAs(spec: { flag?: string; env?: string }): string | undefined {
  if (spec.flag === undefined) return undefined;
  const name = spec.flag.split(' ')[0]!;
  const onLine = process.argv.some((arg) => arg === name || arg.startsWith(`${name}=`));
  return !onLine && spec.env !== undefined && process.env[spec.env] !== undefined ? `variable ${spec.env} (${name})` : `option '${spec.flag}'`;
}

root.parseAsync().catch((error: unknown) => {
  // A client command's usage error (its message already printed), or its --help.
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
    return;
  }
  // Start-up failures (a corrupt data file, a port in use, a bad flag) are the user's to fix: a message, no stack.
  // An option only the start could check (a scenario, a spec) is named as commander names the others.
  const flag = error instanceof OptionError ? givenAs(OPTIONS[error.option]) : undefined;
  const message = startFailure(error);
  process.stderr.write(`shipping-sandbox: ${flag ? `${flag} is invalid. ${message}` : message}\n`);
  process.exit(1);
});
