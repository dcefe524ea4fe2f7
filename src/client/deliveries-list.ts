import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_ENDPOINT, LISTENER_NAME, LISTENER_PREFIX, SANDBOX_EVENT_TYPES, bareListenerName, listenerTarget } from '../records/index.js';
import { isJsonObject } from '../shared/index.js';
import { clientIdValue, clientProgram, required, timeoutOption, tokenValue } from './flags.js';
import { callerHeaders, failure, jsonOf, notASandbox, NotASandbox, withDeadline } from './exchange.js';
import { tokenFromEnv } from './token.js';
import { httpUrl, sandboxUrl } from './url.js';
import { refusal } from './refusal.js';

/** What `shipping-sandbox deliveries list` was asked for. */
export interface ListCommand {
  url: string;
  token?: string;
  client?: string;
  status?: string;
  event?: string;
  orderNo?: string;
  endpoint?: string;
  limit: number;
  json?: boolean;
  /** Milliseconds the command waits for all the pages it asks for, together (--timeout). */
  timeout: number;
}

/** One delivery of `GET /__sandbox/webhooks/deliveries`, as far as the table shows it (--json prints all of it). */
export interface ListedDelivery {
  id: string;
  endpoint_id: string;
  event: string;
  order_no: string | null;
  status: string;
  created_at: string;
  last_error: string | null;
  attempts: Array<{ status_code: number | null; error: string | null; chaos?: string | null; url?: string }>;
}

/** A page of the delivery log. */
interface DeliveryPage {
  total: number;
  next_cursor: string | null;
  deliveries: ListedDelivery[];
}

/** The statuses the delivery log filters on (`queued`: a pending delivery whose attempt is due). */
const STATUSES = ['pending', 'queued', 'delivered', 'failed', 'paused'];
/** The most --limit takes: the endpoint's own largest page. */
const MAX_LIMIT = 1000;
/** Deliveries asked for per request: the endpoint's default page (each delivery carries all its attempts). */
const PAGE_SIZE = 100;

/** An endpoint's id as the delivery log's `endpoint_id` takes it. */
const ENDPOINT_ID = /^(default|ep_[A-Za-z0-9]+)$/;

/** --endpoint: an endpoint id, or a listener's name (bare, or as the table shows it); a name is looked up among the client's endpoints. */
function endpointOption(value: string): string {
  if (!ENDPOINT_ID.test(value) && !LISTENER_NAME.test(bareListenerName(value))) throw new InvalidArgumentError('must be default, an endpoint id ep_..., or a listener\'s name');
  return value;
}

const matching = (pattern: RegExp, message: string) => (value: string) => {
  if (!pattern.test(value)) throw new InvalidArgumentError(message);
  return value;
};

function limit(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < 1 || n > MAX_LIMIT) throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_LIMIT}`);
  return n;
}

/** `shipping-sandbox deliveries list`: its own command line, apart from the server's flags. */
export function listProgram(name = 'shipping-sandbox deliveries list'): Command {
  return clientProgram(name)
    .summary("print a client's webhook delivery log, newest first")
    .description("Prints a sandbox client's webhook deliveries, newest first, with the outcome of each one's last attempt (GET /__sandbox/webhooks/deliveries).")
    .addOption(required(new Option('--url <url>', 'base URL of the sandbox, e.g. http://127.0.0.1:4010').argParser(httpUrl('http://127.0.0.1:4010'))))
    .addOption(new Option('--token <token>', "the client's bearer token (default: SANDBOX_TOKENS when it holds one)").argParser(tokenValue))
    .addOption(new Option('--client <id>', 'the client an admin token acts for (X-Sandbox-Client)').argParser(clientIdValue))
    .addOption(new Option('--status <status>', 'only deliveries with this status').choices(STATUSES))
    .addOption(new Option('--event <event>', 'only deliveries of this event').choices([...SANDBOX_EVENT_TYPES, 'ping']))
    .addOption(new Option('--order-no <order_no>', 'only the deliveries of this order').argParser(matching(/^[0-9]{1,32}$/, 'must be an order number (digits), e.g. 512345678901')))
    .addOption(new Option('--endpoint <id>', "only the deliveries to this endpoint (default, ep_..., or a listener's name)").argParser(endpointOption))
    .addOption(new Option('--limit <n>', `print at most this many (1 to ${MAX_LIMIT})`).argParser(limit).default(20))
    .addOption(timeoutOption())
    .option('--json', 'print the deliveries as one JSON array, as the sandbox gives them');
}

/**
 * The outcome of a delivery's last attempt of its own (not a copy its chaos asked for, such as
 * the forged one a receiver rightly refuses): its HTTP status, or why there was no answer;
 * without one, why it waits if it says.
 */
function lastOutcome(d: ListedDelivery): string {
  const last = [...d.attempts].reverse().find((a) => !a.chaos) ?? d.attempts[d.attempts.length - 1];
  const text = last === undefined ? (d.last_error === null ? '-' : `- (${d.last_error})`) : last.status_code !== null ? String(last.status_code) : (last.error ?? 'no answer');
  // A receiver's or a listener's error may be long: a row stays one line (`--json` has it whole), cut between characters as they show.
  const characters = Array.from(graphemes.segment(text.replace(/\s+/g, ' ')), (part) => part.segment);
  return characters.length > OUTCOME_CHARS ? `${characters.slice(0, OUTCOME_CHARS - 1).join('')}…` : characters.join('');
}

/** Most characters of LAST ATTEMPT in a row. */
const OUTCOME_CHARS = 100;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The table `deliveries list` prints: a header, then one row per delivery in the order given.
 *
 * @example
 * deliveryTable([delivery]).join('\n')
 * // ID        CREATED                   EVENT          ORDER_NO      ENDPOINT  STATUS     ATTEMPTS  LAST ATTEMPT
 * // msg_2f…   2026-05-01T10:01:00.000Z  awb.generated  512345678901  default   delivered  1         200
 */
export function deliveryTable(deliveries: ListedDelivery[], listeners: ReadonlyMap<string, string> | null = new Map()): string[] {
  const rows = [
    ['ID', 'CREATED', 'EVENT', 'ORDER_NO', 'ENDPOINT', 'STATUS', 'ATTEMPTS', 'LAST ATTEMPT'],
    ...deliveries.map((d) => [d.id, d.created_at, d.event, d.order_no ?? '-', endpointLabel(d, listeners), d.status, String(d.attempts.length), lastOutcome(d)]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
}

/**
 * How a delivery's endpoint is printed: `default`, an endpoint's id, or a listener's
 * endpoint as `listener:NAME` (from `listeners`, its id → its name, or from where its
 * attempts went); a removed listener's keeps its id beside, for --endpoint. `listeners` is
 * null when the client's endpoint list could not be read: every endpoint is then its id
 * alone, as nothing is known of which listeners are live.
 */
export function endpointLabel(d: { endpoint_id: string; attempts: ReadonlyArray<{ url?: string }> }, listeners: ReadonlyMap<string, string> | null): string {
  if (listeners === null) return d.endpoint_id;
  const name = listeners.get(d.endpoint_id);
  if (name !== undefined) return listenerTarget(name);
  const target = d.attempts.find((attempt) => attempt.url?.startsWith(LISTENER_PREFIX))?.url;
  return target === undefined ? d.endpoint_id : `${target} (${d.endpoint_id})`;
}

/** The filters given: each one's flag, and the query parameter the endpoint names it by (a listener's endpoint by its id, `endpointId`). */
function filters(options: ListCommand, endpointId = options.endpoint): Array<{ flag: string; param: string; value: string }> {
  const given = [
    { flag: '--status', param: 'status', value: options.status },
    { flag: '--event', param: 'event', value: options.event },
    { flag: '--order-no', param: 'order_no', value: options.orderNo },
    { flag: '--endpoint', param: 'endpoint_id', value: endpointId },
  ];
  return given.filter((f): f is { flag: string; param: string; value: string } => f.value !== undefined);
}

type Send = ReturnType<typeof withDeadline>;
type Refused = { status: number; text: string };
type Gathered = { total: number; deliveries: ListedDelivery[]; listeners: ReadonlyMap<string, string> | null };

/** The client's listener endpoints (`GET /__sandbox/webhooks/endpoints`): each one's id → its listener's name. */
export async function listenersOf(url: string, headers: Record<string, string>, send: Send): Promise<Refused | Map<string, string>> {
  const res = await send(sandboxUrl(url, '/__sandbox/webhooks/endpoints'), { headers });
  if (!res.ok) return { status: res.status, text: res.text };
  const body = jsonOf(res.text);
  if (!isJsonObject(body) || !Array.isArray(body.endpoints)) throw new NotASandbox(notASandbox(url, res.status, 'no list of endpoints'));
  const listeners = body.endpoints.filter(isJsonObject).filter((e) => typeof e.id === 'string' && typeof e.listener === 'string');
  return new Map(listeners.map((e) => [e.id as string, e.listener as string]));
}

/**
 * The client's listener endpoints, only to name them in what a command prints; null, said on
 * stderr, when the list cannot be read: what was asked was done all the same, and those
 * endpoints are then shown by id alone.
 */
export async function listenerNames(url: string, headers: Record<string, string>, send: Send, err: (text: string) => void, command: string): Promise<Map<string, string> | null> {
  let why: string;
  try {
    const found = await listenersOf(url, headers, send);
    if (found instanceof Map) return found;
    why = refusal(found.status, found.text);
  } catch (error) {
    why = failure(error);
  }
  err(`shipping-sandbox ${command}: endpoints are shown by id: the list of endpoints could not be read (${why})\n`);
  return null;
}

/**
 * Up to `options.limit` deliveries, following `next_cursor` page by page, all pages within one
 * --timeout; the total counts every match. A listener's name given to --endpoint is looked up
 * first (a name no endpoint forwards to answers `unknown`); the table names listener endpoints.
 */
async function gather(options: ListCommand, headers: Record<string, string>, err: (text: string) => void): Promise<Refused | { unknown: string; names: string[] } | Gathered> {
  const send = withDeadline(options.timeout);
  let listeners: Map<string, string> | null = null;
  let endpointId = options.endpoint;
  if (endpointId !== undefined && !ENDPOINT_ID.test(endpointId)) {
    const found = await listenersOf(options.url, headers, send);
    if (!(found instanceof Map)) return found;
    listeners = found;
    const name = bareListenerName(endpointId);
    endpointId = [...found].find(([, listener]) => listener === name)?.[0];
    if (endpointId === undefined) return { unknown: name, names: [...found.values()] };
  }
  const deliveries: ListedDelivery[] = [];
  let cursor: string | null = null;
  let total: number | undefined;
  // Bounded: each page adds at least one delivery, or the walk stops.
  do {
    const url = sandboxUrl(options.url, '/__sandbox/webhooks/deliveries');
    for (const { param, value } of filters(options, endpointId)) url.searchParams.set(param, value);
    url.searchParams.set('limit', String(Math.min(PAGE_SIZE, options.limit - deliveries.length)));
    if (cursor !== null) url.searchParams.set('cursor', cursor);
    const res = await send(url, { headers });
    if (!res.ok) return { status: res.status, text: res.text };
    const page = deliveryPage(res.text);
    if (page === undefined) throw new NotASandbox(notASandbox(options.url, res.status, 'no page of deliveries'));
    total ??= page.total;
    deliveries.push(...page.deliveries.slice(0, options.limit - deliveries.length));
    cursor = page.deliveries.length > 0 ? page.next_cursor : null;
  } while (cursor !== null && deliveries.length < options.limit);
  if (listeners === null && !options.json && deliveries.some((d) => d.endpoint_id !== DEFAULT_ENDPOINT)) {
    listeners = await listenerNames(options.url, headers, send, err, 'deliveries list');
  }
  return { total: total ?? 0, deliveries, listeners };
}

/**
 * `deliveries list` with parsed flags: prints the table (or the JSON array) and returns the
 * exit code: 0 (none matching included), 1 when the sandbox refused, 2 when it cannot be reached
 * or has not given every page within --timeout.
 */
export async function executeList(options: ListCommand, out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const token = options.token ?? tokenFromEnv(env, err, 'deliveries list');
  if (token === undefined) return 2;
  const headers = callerHeaders(token, options.client);
  let answer: Awaited<ReturnType<typeof gather>>;
  try {
    answer = await gather(options, headers, err);
  } catch (error) {
    err(`shipping-sandbox deliveries list: ${failure(error)}\n`);
    return 2;
  }
  if ('text' in answer) {
    err(`shipping-sandbox deliveries list: ${refusal(answer.status, answer.text)}\n`);
    return 1;
  }
  if ('unknown' in answer) {
    // A listener named like an endpoint id (default, ep_…) is named with its prefix: bare, the name is read as the id.
    const known = answer.names.length === 0 ? 'it has none' : `its listeners: ${answer.names.map((n) => (ENDPOINT_ID.test(n) ? listenerTarget(n) : n)).join(', ')}`;
    err(`shipping-sandbox deliveries list: no endpoint of this client forwards to a listener named ${answer.unknown} (${known})\n`);
    return 1;
  }
  const { total, deliveries, listeners } = answer;
  if (options.json) out(`${JSON.stringify(deliveries, null, 2)}\n`);
  else if (deliveries.length === 0) {
    const given = filters(options);
    out(`no webhook deliveries ${given.length > 0 ? `match ${given.map((f) => `${f.flag} ${f.value}`).join(' ')}` : 'yet'}\n`);
  } else {
    const hint = options.limit < MAX_LIMIT ? '; --limit shows more' : '';
    const more = total > deliveries.length ? `\n${deliveries.length} of ${total} deliveries shown, newest first${hint}` : '';
    out(`${deliveryTable(deliveries, listeners).join('\n')}${more}\n`);
  }
  return 0;
}

/** A 200's page of deliveries, or undefined when the body is not one. */
function deliveryPage(text: string): DeliveryPage | undefined {
  const page = jsonOf(text);
  if (!isJsonObject(page) || !Array.isArray(page.deliveries) || !page.deliveries.every(isListedDelivery)) return undefined;
  return page as unknown as DeliveryPage;
}

/** Whether a listed delivery has what its row prints. */
const isListedDelivery = (d: unknown): boolean =>
  isJsonObject(d) && ['id', 'created_at', 'event', 'endpoint_id', 'status'].every((field) => typeof d[field] === 'string') && Array.isArray(d.attempts) && d.attempts.every(isJsonObject);
