import { Command, InvalidArgumentError, Option, type OptionValues } from 'commander';
import { isCalendarDay, isJsonObject } from '../shared/index.js';
import { clientIdValue, clientProgram, parseFlags, required, timeoutOption, tokenValue } from './flags.js';
import { callerHeaders, failure, jsonOf, notASandbox, withDeadline, type Answer } from './exchange.js';
import { tokenFromEnv } from './token.js';
import { httpUrl, sandboxUrl } from './url.js';
import { refusal } from './refusal.js';
import { executeList, listProgram, type ListCommand } from './deliveries-list.js';

/** What `shipping-sandbox deliveries recover` was asked for. */
export interface RecoverCommand {
  url: string;
  token?: string;
  since: string;
  until?: string;
  client?: string;
  /** Milliseconds the command waits for the sandbox's whole answer (--timeout). */
  timeout: number;
}

/** A date and time with its offset, as the sandbox takes them (RFC 3339): `2026-05-01` or `yesterday` is refused here, naming the flag. */
const TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

function time(value: string): string {
  const parts = TIME.exec(value);
  // A day the calendar has: the sandbox refuses 2026-02-30.
  if (!parts || !isCalendarDay(Number(parts[1]), Number(parts[2]), Number(parts[3]))) {
    throw new InvalidArgumentError('must be a time in ISO 8601 with its offset, e.g. 2026-05-01T10:00:00Z');
  }
  return value;
}

/** `shipping-sandbox deliveries recover`: its own command line, apart from the server's flags. */
export function recoverProgram(name = 'shipping-sandbox deliveries recover'): Command {
  return clientProgram(name)
    .summary("redeliver a client's failed webhooks of a time window")
    .description("Redelivers every failed webhook delivery of a sandbox client created in a time window (POST /__sandbox/webhooks/recover); the attempts are made in the background.")
    .addOption(required(new Option('--url <url>', 'base URL of the sandbox, e.g. http://127.0.0.1:4010').argParser(httpUrl('http://127.0.0.1:4010'))))
    .addOption(new Option('--token <token>', "the client's bearer token (default: SANDBOX_TOKENS when it holds one)").argParser(tokenValue))
    .addOption(required(new Option('--since <time>', "deliveries created at or after this time (ISO 8601, on the client's sandbox clock)").argParser(time)))
    .addOption(new Option('--until <time>', 'deliveries created at or before this time (default: up to now)').argParser(time))
    .addOption(new Option('--client <id>', 'the client an admin token acts for (X-Sandbox-Client)').argParser(clientIdValue))
    .addOption(timeoutOption());
}

/** The subcommands of `shipping-sandbox deliveries`, as its usage and its unknown-command message show them. */
const USAGE = [
  'shipping-sandbox deliveries list --url <url> --token <token> [--status <status>] [--event <event>] [--order-no <order_no>] [--endpoint <id>] [--limit <n>] [--json] [--client <id>] [--timeout <duration>]',
  'shipping-sandbox deliveries recover --since <time> [--until <time>] --url <url> --token <token> [--client <id>] [--timeout <duration>]',
];

/** A subcommand's flags parsed by its program: the options, or the exit code after its --help (0) or a bad flag (2, the message printed). */
function parsed<T extends OptionValues>(program: Command, argv: string[], out: (text: string) => void, err: (text: string) => void): { options: T } | { code: number } {
  const done = parseFlags(program, argv, out, err);
  return typeof done === 'number' ? { code: done } : { options: done.opts<T>() };
}

/**
 * Runs `deliveries list` or `deliveries recover` and returns the exit code: 0 done, 1 when the
 * sandbox refused (for recover: a bad window, no webhook URL), 2 for a bad flag or when the
 * sandbox cannot be reached or has not answered within --timeout.
 */
export async function runDeliveries(argv: string[], out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h') {
    out(`Usage: ${USAGE.join('\n       ')}\n(shipping-sandbox deliveries list --help, or recover --help, says more)\n`);
    return 0;
  }
  if (sub === 'list') {
    const list = parsed<ListCommand>(listProgram(), rest, out, err);
    return 'code' in list ? list.code : executeList(list.options, out, err, env);
  }
  if (sub === 'recover') {
    const recover = parsed<RecoverCommand>(recoverProgram(), rest, out, err);
    return 'code' in recover ? recover.code : executeRecover(recover.options, out, err, env);
  }
  err(unknownDeliveriesCommand(sub));
  return 2;
}

/** What `shipping-sandbox deliveries` says to a subcommand it does not have: the ones it has, with their flags. */
export const unknownDeliveriesCommand = (sub: string | undefined): string =>
  `shipping-sandbox deliveries: ${sub?.startsWith('-') ? `a subcommand comes first, before '${sub}'` : `unknown command ${sub === undefined ? '(none)' : `'${sub}'`}`}; the ones there are:\n  ${USAGE.join('\n  ')}\n`;

/** `deliveries recover` with parsed flags (see runDeliveries). */
export async function executeRecover(options: RecoverCommand, out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const token = options.token ?? tokenFromEnv(env, err, 'deliveries');
  if (token === undefined) return 2;
  const headers = { ...callerHeaders(token, options.client), 'content-type': 'application/json' };
  const body = JSON.stringify({ since: options.since, ...(options.until === undefined ? {} : { until: options.until }) });
  let res: Answer;
  try {
    res = await withDeadline(options.timeout)(sandboxUrl(options.url, '/__sandbox/webhooks/recover'), { method: 'POST', headers, body });
  } catch (error) {
    err(`shipping-sandbox deliveries recover: ${failure(error)}\n`);
    return 2;
  }
  if (!res.ok) {
    err(`shipping-sandbox deliveries recover: ${refusal(res.status, res.text)}\n`);
    return 1;
  }
  const answer = jsonOf(res.text);
  if (!isJsonObject(answer) || typeof answer.queued !== 'number') {
    err(`shipping-sandbox deliveries recover: ${notASandbox(options.url, res.status, 'no recovery')}\n`);
    return 2;
  }
  out(`queued ${answer.queued} failed deliveries created from ${answer.since} to ${answer.until ?? 'now'} for another attempt; follow them with GET /__sandbox/webhooks/deliveries\n`);
  const left = leftOut(answer.skipped);
  if (left) out(`left out ${left}\n`);
  return 0;
}

/** The answer's `skipped` counts as a line's words, or '' when none was left out (or the sandbox is older than them). */
function leftOut(skipped: unknown): string {
  if (!isJsonObject(skipped)) return '';
  const count = (key: string) => (typeof skipped[key] === 'number' ? skipped[key] : 0);
  const why = [
    [count('endpoint_unavailable'), 'whose endpoint is deleted, disabled, has no URL or is a listener not connected now'],
    [count('attempt_limit'), 'that already have 50 attempts'],
  ] as const;
  return why
    .filter(([n]) => n > 0)
    .map(([n, reason]) => `${n} ${reason}`)
    .join(' and ');
}
