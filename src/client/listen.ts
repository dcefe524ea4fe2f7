import { hostname, userInfo } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { LISTENER_NAME, SANDBOX_EVENT_TYPES } from '../records/index.js';
import { DEFAULT_TUNING, listen, type ListenTuning } from './listen-session.js';
import { clientIdValue, clientProgram, notAFlag, parseFlags, required, tokenValue } from './flags.js';
import { tokenFromEnv } from './token.js';
import { httpUrl } from './url.js';

/** What `shipping-sandbox listen` was asked for. */
export interface ListenCommand {
  url: string;
  token?: string;
  forwardTo: string;
  events?: string[];
  name?: string;
  client?: string;
}

/** `user@host` of this machine in the characters a name may hold (others become `-`), cut to 64. */
export function defaultName(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // A container's user may have no passwd entry.
    user = process.env.USER ?? process.env.USERNAME ?? 'user';
  }
  const name = `${user}@${hostname()}`.replace(/[^A-Za-z0-9._@-]/g, '-').slice(0, 64);
  return LISTENER_NAME.test(name) ? name : 'listener';
}

/** `--events` parsed; given again, its events are added to those given before (as one comma-separated list would be). */
function eventList(value: string, before?: string[]): string[] {
  const events = value.split(',').map((e) => e.trim());
  const hint = `use one or more of ${SANDBOX_EVENT_TYPES.join(', ')}, comma-separated`;
  // Said as the other flags' refusals are, after commander's "argument '…' is invalid.": what the value must be.
  if (value.trim() === '') throw new InvalidArgumentError(`must name at least one event: ${hint}`);
  if (events.includes('')) throw new InvalidArgumentError(`must not hold an empty event name (a comma too many): ${hint}`);
  const unknown = events.filter((e) => !(SANDBOX_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) throw new InvalidArgumentError(`${unknown.map((e) => `"${e}"`).join(', ')} ${unknown.length === 1 ? 'is not an event' : 'are not events'}: ${hint}`);
  return [...new Set([...(before ?? []), ...events])];
}

function listenerName(value: string): string {
  notAFlag(value);
  if (!LISTENER_NAME.test(value)) throw new InvalidArgumentError('must be 1 to 64 characters of A-Z a-z 0-9 . _ @ -');
  return value;
}

/** `shipping-sandbox listen`: its own command line, apart from the server's flags. */
export function listenProgram(name = 'shipping-sandbox listen'): Command {
  return clientProgram(name)
    .summary("forward a client's webhooks to a receiver on this machine (runs until Ctrl-C)")
    .description(
      "Opens an outbound WebSocket to a sandbox as a listener endpoint of your client, and POSTs each webhook attempt to --forward-to with the exact body and signed headers a direct delivery has; the local answer goes back as the attempt's outcome. Prints the endpoint's signing secret once connected and one line per forward; reconnects after a drop. Exits 0 on Ctrl-C or SIGTERM; 1 when the sandbox refuses or ends the listener; 2 for a bad flag, no token, or a --url that is no shipping sandbox before the first connection (a page no sandbox gives: \"is it a shipping sandbox?\"; an https:// URL to a sandbox that speaks plain http).",
    )
    .addOption(required(new Option('--url <url>', 'base URL of the sandbox, e.g. https://sandbox.example').argParser(httpUrl('https://sandbox.example'))))
    .addOption(new Option('--token <token>', "the client's bearer token (default: SANDBOX_TOKENS when it holds one); sent in the Authorization header").argParser(tokenValue))
    .addOption(required(new Option('--forward-to <url>', 'the local receiver each webhook is POSTed to, e.g. http://localhost:3000/hooks').argParser(httpUrl('http://localhost:3000/hooks'))))
    .addOption(new Option('--events <list>', `the events this listener gets, comma-separated (${SANDBOX_EVENT_TYPES.join(', ')}), or the flag repeated; default: every event, or the filter an existing listener of this name has`).argParser(eventList))
    .addOption(new Option('--name <name>', `the listener, one endpoint of your client: 1 to 64 of A-Z a-z 0-9 . _ @ - (default: user@host of this machine, here ${defaultName()})`).argParser(listenerName))
    .addOption(new Option('--client <id>', 'the client an admin token acts for (X-Sandbox-Client)').argParser(clientIdValue));
}

/** Listens with parsed flags until stopped or ended (see listen()); returns the exit code, 2 when no token is given. */
export async function executeListen(options: ListenCommand, out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv, stop: AbortSignal, tuning: ListenTuning = DEFAULT_TUNING): Promise<number> {
  const token = options.token ?? tokenFromEnv(env, err, 'listen');
  if (token === undefined) return 2;
  const settings = { url: options.url, token, forwardTo: options.forwardTo, name: options.name ?? defaultName(), events: options.events, client: options.client };
  return listen(settings, { out, err }, stop, tuning);
}

/**
 * `shipping-sandbox listen` from its arguments: forwards the client's webhooks to
 * --forward-to until `stop` is aborted (0), the sandbox refuses or ends the listener (1),
 * or a flag is wrong, no token is given, or --url shows itself no sandbox before the first
 * connection (2).
 */
export async function runListen(argv: string[], out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv, stop: AbortSignal, tuning?: ListenTuning): Promise<number> {
  const program = parseFlags(listenProgram(), argv, out, err);
  if (typeof program === 'number') return program;
  return executeListen(program.opts<ListenCommand>(), out, err, env, stop, tuning);
}
