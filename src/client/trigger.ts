import { Command, Option } from 'commander';
import { isJsonObject } from '../shared/index.js';
import { clientIdValue, clientProgram, nonEmpty, parseFlags, required, timeoutOption, tokenValue } from './flags.js';
import { callerHeaders, failure, jsonOf, NoAnswer, notASandbox, withDeadline, type Answer } from './exchange.js';
import { tokenFromEnv } from './token.js';
import { apiPrefixHint, httpUrl, sandboxUrl } from './url.js';
import { refusal } from './refusal.js';
import { endpointLabel, listenerNames } from './deliveries-list.js';
import { DEFAULT_ENDPOINT } from '../records/index.js';

/** What `shipping-sandbox trigger` was asked for. */
export interface TriggerCommand {
  url: string;
  token?: string;
  order?: string;
  scenario?: string;
  toStep?: string;
  client?: string;
  json?: boolean;
  /** Milliseconds the command waits for the sandbox's whole answer (--timeout). */
  timeout: number;
}

/** The events the sandbox can trigger (POST /__sandbox/events/trigger); tracking.step is no webhook of its own. */
const EVENTS = ['awb.generated', 'awb.failed', 'order.cancelled', 'tracking.step'];

/** The trigger's answer, as far as this command prints it. */
interface TriggerAnswer {
  event: string;
  order: { order_no: string; status: string; awb: string | null; scenario: string; history: unknown[] };
  /** Each delivery made, with where its attempts went (a listener's endpoint: `listener:NAME`). */
  deliveries: { id: string; event: string; endpoint_id: string; status: string; last_error: string | null; attempts: Array<{ url?: string }> }[];
  outcome: string | null;
}

/** `shipping-sandbox trigger <event>`: its own command line, apart from the server's flags. */
export function triggerProgram(name = 'shipping-sandbox trigger'): Command {
  return clientProgram(name)
    .summary('fire a webhook event (or play an order up to a tracking step) and print what it made')
    .description('Fires a webhook event (or plays an order up to a tracking step) on a new fixture order or one of yours, and prints the order, its deliveries and the outcome.')
    .argument('<event>', `one of ${EVENTS.join(', ')}`)
    .addOption(required(new Option('--url <url>', 'base URL of the sandbox, e.g. http://127.0.0.1:4010').argParser(httpUrl('http://127.0.0.1:4010'))))
    .addOption(new Option('--token <token>', "the client's bearer token (default: SANDBOX_TOKENS when it holds one)").argParser(tokenValue))
    .addOption(new Option('--order <order_no>', 'one of your orders (default: a new fixture order)').argParser(nonEmpty))
    .addOption(new Option('--scenario <name>', "the new order's scenario (GET /__sandbox/scenarios; default: the client's default scenario)").argParser(nonEmpty))
    .addOption(new Option('--to-step <step>', 'required with tracking.step: the step to play up to, by key or number (1 is the first)').argParser(nonEmpty))
    .addOption(new Option('--client <id>', 'the client an admin token acts for (X-Sandbox-Client)').argParser(clientIdValue))
    .addOption(timeoutOption())
    .option('--json', "print the sandbox's answer as JSON");
}

/**
 * The lines printed for an answer: the order, each delivery with its endpoint (`listeners`: a
 * listener endpoint's id → its name; null when the endpoint list could not be read, see
 * endpointLabel) and why it stands as it does, the outcome.
 */
export function triggerLines(answer: TriggerAnswer, listeners: ReadonlyMap<string, string> | null = new Map()): string[] {
  const { order } = answer;
  return [
    `order     ${order.order_no}  ${order.status}  scenario ${order.scenario}  AWB ${order.awb ?? '-'}  ${order.history.length} tracking entries`,
    ...answer.deliveries.map((d) => {
      const why = d.last_error ?? (d.status === 'queued' ? notEnded(listeners?.has(d.endpoint_id) === true) : null);
      return `delivery  ${d.id}  ${d.event}  to ${endpointLabel(d, listeners)}  ${d.status}${why ? `  (${why})` : ''}`;
    }),
    `outcome   ${answer.outcome ?? 'no webhook'}`,
  ];
}

/**
 * Why a delivery is `queued` with no error: its attempt had not ended when the sandbox
 * answered (the answer waits a bounded time; a listener's attempt may end after it, as the
 * sandbox waits a little longer than the webhook timeout for a listener's answer).
 */
const notEnded = (toListener: boolean): string =>
  `${toListener ? "still waiting for the listener's answer" : 'its attempt had not ended'} when the sandbox answered; \`shipping-sandbox deliveries list\` shows how it ends`;

/** Triggers the event, prints what it made, and returns the exit code: 0; 1 when the sandbox refused (an unknown event, scenario or step, an order it cannot take there); 2 for a bad flag (tracking.step without --to-step among them) or when the sandbox cannot be reached or has not answered within --timeout. */
export async function runTrigger(argv: string[], out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = parseFlags(triggerProgram(), argv, out, err);
  if (typeof program === 'number') return program;
  return executeTrigger(program.args[0]!, program.opts<TriggerCommand>(), out, err, env);
}

/** The trigger with parsed flags (see runTrigger). */
export async function executeTrigger(event: string, options: TriggerCommand, out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // The sandbox would refuse it too, but only after the request: the flag is the user's to add.
  if (event === 'tracking.step' && options.toStep === undefined) {
    err("shipping-sandbox trigger: --to-step is required with tracking.step: the step to play up to, by key or number (1 is the first)\n");
    return 2;
  }
  const token = options.token ?? tokenFromEnv(env, err, 'trigger');
  if (token === undefined) return 2;
  const body = {
    event,
    ...(options.order !== undefined ? { order_no: options.order } : {}),
    ...(options.scenario !== undefined ? { scenario: options.scenario } : {}),
    ...(options.toStep !== undefined ? { to_step: options.toStep } : {}),
  };
  const headers = { ...callerHeaders(token, options.client), 'content-type': 'application/json' };
  // One deadline for the trigger and the look at the listeners after it: --timeout bounds the whole command.
  const send = withDeadline(options.timeout);
  let res: Answer;
  try {
    res = await send(sandboxUrl(options.url, '/__sandbox/events/trigger'), { method: 'POST', headers, body: JSON.stringify(body) });
  } catch (error) {
    // The request was sent: the sandbox may have fired the event and be still waiting for its first attempts.
    const fired = error instanceof NoAnswer ? `; the event may have fired all the same: look for it with \`shipping-sandbox deliveries list${options.client === undefined ? '' : ` --client ${options.client}`}${options.order === undefined ? '' : ` --order-no ${options.order}`}\` before triggering it again` : '';
    err(`shipping-sandbox trigger: ${failure(error)}${fired}\n`);
    return 2;
  }
  if (!res.ok) {
    err(`shipping-sandbox trigger: ${refusal(res.status, res.text)}${apiPrefixHint(options.url, res.status)}\n`);
    return 1;
  }
  const answer = jsonOf(res.text);
  if (answer === undefined) {
    err(`shipping-sandbox trigger: ${notASandbox(options.url, res.status, 'no JSON')}\n`);
    return 2;
  }
  if (!isTriggerAnswer(answer)) {
    err(`shipping-sandbox trigger: ${notASandbox(options.url, res.status, "JSON that is no trigger's answer")}\n`);
    return 2;
  }
  if (options.json) {
    out(`${res.text}\n`);
    return 0;
  }
  const listeners = answer.deliveries.some((d) => d.endpoint_id !== DEFAULT_ENDPOINT) ? await listenerNames(options.url, headers, send, err, 'trigger') : new Map<string, string>();
  out(`${triggerLines(answer, listeners).join('\n')}\n`);
  return 0;
}

/** Whether a 200's JSON is the trigger's answer, as far as the lines printed read it. */
function isTriggerAnswer(value: unknown): value is TriggerAnswer {
  if (!isJsonObject(value) || !isJsonObject(value.order) || !Array.isArray(value.deliveries)) return false;
  const { order } = value;
  return typeof order.order_no === 'string' && Array.isArray(order.history) && value.deliveries.every((d) => isJsonObject(d) && typeof d.id === 'string' && typeof d.endpoint_id === 'string' && Array.isArray(d.attempts));
}
