import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { isUsableToken, parseDuration } from '../shared/index.js';

/**
 * A flag's value that may not be empty: `--token "$TOKEN"` or `--order "$ORDER"` with the
 * variable unset is a mistake to name, not a request to send (without an order a trigger
 * makes a new one; without a token the sandbox answers 401).
 */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  notAFlag(value);
  return value;
}

/**
 * A value that is the next flag (`--token --url X`): commander gives a flag that takes a value
 * whatever follows it, so --token got `--url`, and the command then said --url was missing.
 * A value shaped as a long flag (`--` and lowercase words joined by dashes, perhaps `=` and a
 * value: `--token --url=X`) is taken for one; a token of that shape goes in SANDBOX_TOKENS. The refusal does not quote the value: it may
 * be a token.
 */
export function notAFlag(value: string): void {
  if (/^--[a-z]+(-[a-z]+)*(=.*)?$/.test(value)) throw new InvalidArgumentError('has no value: what follows it is the next flag');
}

/** `--client`'s value: a client id, which may go beyond ASCII (`Müller GmbH`), but holds no control character, as the config's ids hold none. */
export function clientIdValue(value: string): string {
  nonEmpty(value);
  if (/\p{Cc}/u.test(value)) throw new InvalidArgumentError('must not hold a line break or another control character (it is sent in a header), as no client id does');
  return value;
}

/**
 * `--token`'s value: a token the sandbox can take (see isUsableToken). A refusal goes out
 * without the token (see hideToken), which commander would quote.
 */
export function tokenValue(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  notAFlag(value);
  if (!isUsableToken(value)) throw new InvalidArgumentError(TOKEN_RULE);
  return value;
}

/** What a token may hold, as a refusal says it. */
export const TOKEN_RULE = 'a token is visible text without spaces, in characters of one byte (it is sent in the Authorization header)';

/**
 * A client command's error output with a refused `--token` value left out: commander
 * writes `option '--token <token>' argument '<value>' is invalid`, and a token is a secret
 * (a CI log keeps it). Given to each command's `configureOutput({ outputError })`.
 */
export const hideToken = (text: string, write: (text: string) => void): void =>
  write(text.replace(/(option '--token <token>') argument '[\s\S]+?' is invalid\./, '$1 is invalid (the value is not shown).'));

/** The longest --timeout: a timer of this process fires at once past 2^31 - 1 ms (24.8 days), and no command needs a day. */
const MAX_TIMEOUT_MS = 86_400_000;

/**
 * --timeout's value in milliseconds: a duration as the sandbox's flags write them, above 0
 * and with its unit (a bare `30` would be 30 ms, as it is elsewhere, which no one means here).
 *
 * @example timeout('2m') // 120_000
 */
export function timeout(value: string): number {
  const ms = parseDuration(value);
  if (/^\s*\d+(\.\d+)?\s*$/.test(value) && Number(value) > 0) throw new InvalidArgumentError('has no unit: use for example 30s, 500ms or 2m (a bare number would be milliseconds)');
  if (ms === undefined || ms <= 0 || ms > MAX_TIMEOUT_MS) throw new InvalidArgumentError('must be a duration above 0 and at most 24h, e.g. 30s, 500ms or 2m');
  return ms;
}

/** The --timeout of the commands that ask the sandbox and exit (not `listen`): how long the whole command waits for its answers. */
export const timeoutOption = (): Option =>
  new Option('--timeout <duration>', 'give up (exit 2) when the sandbox has not answered in full within this, for the whole command, e.g. 10s, 500ms, 2m').argParser(timeout).default(30_000, '30s');

/** The flags marked by required(): commander's own mandatory check comes too early (see checkFlags). */
const REQUIRED = new WeakSet<Option>();

/** A flag the command cannot run without, checked by checkFlags. */
export function required(option: Option): Option {
  REQUIRED.add(option);
  return option;
}

/**
 * Refuses a required flag not given. Commander checks its own mandatory options before unknown
 * ones, so a typo such as `--forward_to` was told that `--forward-to` is missing rather than
 * "Did you mean --forward-to?"; this runs once commander has named unknown flags.
 */
export function checkFlags(command: Command): void {
  for (const option of command.options) {
    if (REQUIRED.has(option) && command.getOptionValue(option.attributeName()) === undefined) {
      command.error(`error: required option '${option.flags}' not specified`, { code: 'commander.missingMandatoryOptionValue', exitCode: 2 });
    }
  }
}

/** A client command's program: its refusals leave a token out (hideToken), and its flags are checked before it runs (checkFlags). */
export const clientProgram = (name: string): Command =>
  new Command(name).configureOutput({ outputError: hideToken }).hook('preAction', (_hooked, action) => checkFlags(action));

/**
 * A client command's flags parsed without running it (the run* functions): its program, or the
 * exit code after its --help (0) or a bad flag (2, the message printed).
 */
export function parseFlags(program: Command, argv: string[], out: (text: string) => void, err: (text: string) => void): Command | number {
  try {
    program.exitOverride().configureOutput({ writeOut: out, writeErr: err }).parse(argv, { from: 'user' });
    checkFlags(program);
    return program;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
}
