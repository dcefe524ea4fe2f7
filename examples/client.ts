/**
 * An example client of the Shipping Order Service API, written with openapi-fetch
 * against types that openapi-typescript generated from the specs the sandbox serves
 * (examples/types/). It walks the whole loop: create an order, receive and verify
 * its AWB webhook, track the parcel to delivery, and handle a 400 and a 404.
 *
 * It points the client's webhook at a receiver of its own for the run. A URL, secret and
 * chaos set through the API are put back at the end, also when the run is stopped by
 * SIGINT or SIGTERM or a wait times out. A URL from the config file or flags (or none)
 * cannot be put back through the API: on a client with no orders the example runs and
 * leaves its receiver's URL set; on a client with orders it refuses, saying how to run it
 * with a client of its own. It never resets the client: its orders stay (see
 * docs/guides/first-client.md for everything a run leaves).
 *
 * Against a running sandbox (any clock: it drives the order with the control API, and
 * on a manual clock advances the caller's clock by 0 ms to send what is due):
 *
 *   npx tsx examples/client.ts http://127.0.0.1:4010 <token>
 *
 * In a checkout of the sandbox, openapi-fetch and tsx are among its devDependencies; the
 * installed package does not bring them (`npm install --save-dev openapi-fetch tsx`).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import createClient from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { paths as ControlPaths } from './types/control.js';
import type { components, paths as ProviderPaths } from './types/provider.js';

type CreateOrderRequest = components['schemas']['CreateOrderRequest'];
type Control = ReturnType<typeof createClient<ControlPaths>>;
type Tracking = components['schemas']['TrackingResponse'];

/** The AWB webhook body (the `awb.generated` event of the provider spec's `webhooks`). */
interface AwbGenerated {
  event: 'awb.generated';
  order_no: string;
  awb: string;
}

/** What one run of the example saw, step by step. */
export interface ExampleRun {
  orderNumbers: string[];
  awb: string;
  /** The `webhook-id` of the verified AWB webhook. */
  webhookId: string;
  /** Tracking status codes seen, oldest first, ending with "2" (delivered). */
  statuses: string[];
  delivered: Tracking;
  /** The field named by the 400 of a create with a bad weight. */
  badRequestField: string;
  /** The message of the 404 of an AWB that does not exist. */
  notFoundMessage: string;
}

const ORDER = JSON.parse(readFileSync(new URL('./order.json', import.meta.url), 'utf8')) as CreateOrderRequest;
/** A Standard Webhooks secret for this run's receiver. */
const SECRET = 'whsec_ZXhhbXBsZS1jbGllbnQtc2VjcmV0LTI0Ynl0ZXM=';

/** How a run may be bounded and stopped. */
export interface ExampleOptions {
  /** How long each wait (an answer of the sandbox, the AWB webhook) may take before the run stops with a message. Default 15 s. */
  timeoutMs?: number;
  /** Stops the run (the script aborts it on SIGINT and SIGTERM); the webhook settings are still put back. */
  signal?: AbortSignal;
}

/** `promise`, or a rejection with `message` after `ms`, or with the signal's reason once it is aborted. */
function within<T>(promise: Promise<T>, ms: number, message: string, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const settle = (done: () => void) => {
      clearTimeout(timer); // nothing of a finished wait keeps the process alive
      signal?.removeEventListener('abort', onAbort);
      done();
    };
    const onAbort = () => settle(() => reject(signal!.reason));
    const timer = setTimeout(() => settle(() => reject(new Error(message))), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

/** fetch for openapi-fetch that gives up after `ms` (or once `signal` is aborted) with a message naming the request. */
function fetchWithin(ms: number, signal?: AbortSignal): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return await fetch(request, { signal: AbortSignal.any([AbortSignal.timeout(ms), ...(signal ? [signal] : [])]) });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const { origin, pathname } = new URL(request.url);
      const why = (error as Error).name === 'TimeoutError' ? `no answer within ${ms / 1000} s` : `no answer (${String((error as Error & { cause?: Error }).cause?.message ?? error)})`;
      throw new Error(`${request.method} ${pathname}: ${why}; is the sandbox running at ${origin}?`);
    }
  };
}

/**
 * A local webhook receiver: verifies each delivery's signature and hands over the
 * `awb.generated` events of `ours` (the order numbers this run created). Other deliveries
 * of the client get a 503, so the sandbox retries them later, at the URL put back.
 */
async function awbReceiver(secret: string, ours: Set<string>): Promise<{ url: string; next: () => Promise<{ id: string; event: AwbGenerated }>; close: () => void }> {
  const verifier = new Webhook(secret);
  const waiting: Array<(value: { id: string; event: AwbGenerated }) => void> = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      try {
        const event = verifier.verify(raw, req.headers as Record<string, string>) as AwbGenerated;
        if (!ours.has(event.order_no)) return void res.writeHead(503, { 'retry-after': '60' }).end();
        res.writeHead(204).end();
        if (event.event === 'awb.generated') waiting.shift()?.({ id: String(req.headers['webhook-id']), event });
      } catch {
        res.writeHead(400).end(); // a bad signature: the sandbox retries
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/awb`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}

/**
 * How to give the client's webhook back after the run, read before it is changed.
 * Settings made through the API are put back as they were. A URL from the config file or
 * flags (or none) cannot be put back through the API (only a reset returns to it, and a
 * reset removes the client's orders, deliveries, journal, fault rules and report), so it
 * is left as the run set it; that is done only for a client with no orders. Setting a URL
 * also sends every delivery the sandbox held while there was none: on a client with
 * orders and no URL, that would hand their webhooks to this example.
 */
async function planGiveBack(control: Control): Promise<{ giveBack: () => Promise<void>; chaos: string[] }> {
  const before = await control.GET('/__sandbox/webhook');
  if (before.error) throw new Error(`GET /__sandbox/webhook: ${before.error.message}`);
  const { url: previousUrl, secret: previousSecret, chaos, source } = before.data;
  if (source === 'runtime' && previousUrl) {
    const giveBack = async () => {
      const put = await control.PUT('/__sandbox/webhook', { body: { url: previousUrl, secret: previousSecret, chaos } });
      if (put.error) throw new Error(`putting the webhook back (PUT /__sandbox/webhook): ${put.error.message}`);
    };
    return { giveBack, chaos };
  }
  const orders = await control.GET('/__sandbox/orders', { params: { query: { limit: 1 } } });
  if (orders.error) throw new Error(`GET /__sandbox/orders: ${orders.error.message}`);
  if (orders.data.total > 0) {
    throw new Error(
      (previousUrl === null
        ? "This client has no webhook URL, which cannot be put back through the API once the example sets one, and the client has orders: "
        : `This client's webhook URL (${previousUrl}, set by ${source === 'config' ? 'its entry in the clients file' : "the sandbox's --webhook-url"}) cannot be put back through the API, and the client has orders: `) +
        'the example leaves it alone. Run it with a client of its own: a sandbox of its own ' +
        '(npm start -- --port 4011 --data :memory: --token example-token, then npx tsx examples/client.ts http://127.0.0.1:4011 example-token), ' +
        'or a second client beside yours in a clients file (docs/guides/first-client.md#run-it; not --token <your token>: ' +
        'a token given with --token names a client of its own, which sees none of your orders).',
    );
  }
  return { giveBack: async () => undefined, chaos };
}

/**
 * Runs the loop against a sandbox at `baseUrl` as the client of `token`, and puts the
 * client's webhook settings back when it can (see `planGiveBack`), whether the run ends,
 * fails, times out or is stopped through `options.signal`.
 *
 * @example const run = await runExample('http://127.0.0.1:4010', 'sbx_...', { timeoutMs: 15_000 })
 */
export async function runExample(baseUrl: string, token: string, options: ExampleOptions = {}): Promise<ExampleRun> {
  const { timeoutMs = 15_000, signal } = options;
  const headers = { Authorization: `Bearer ${token}` };
  const api = createClient<ProviderPaths>({ baseUrl, headers, fetch: fetchWithin(timeoutMs, signal) });
  const control = createClient<ControlPaths>({ baseUrl, headers, fetch: fetchWithin(timeoutMs, signal) });
  // The give-back is not stopped by the signal: it is what a stopped run still has to do.
  const restorer = createClient<ControlPaths>({ baseUrl, headers, fetch: fetchWithin(timeoutMs) });
  const ours = new Set<string>();
  const receiver = await awbReceiver(SECRET, ours);
  let giveBack: () => Promise<void> = async () => undefined;
  try {
    // 1. Point this client's webhook at the receiver, for this run only.
    const plan = await planGiveBack(restorer);
    giveBack = plan.giveBack;
    const set = await control.PUT('/__sandbox/webhook', { body: { url: receiver.url, secret: SECRET } });
    if (set.error) throw new Error(`PUT /__sandbox/webhook: ${set.error.message}`);
    const clock = await control.GET('/__sandbox/clock');
    if (clock.error) throw new Error(`GET /__sandbox/clock: ${clock.error.message}`);

    // 2. Create the order; the answer has order numbers, no AWB.
    const created = await api.POST('/v1/order', { body: ORDER });
    if (created.error) throw new Error(`POST /v1/order: ${created.error.message}`);
    const orderNo = created.data.order_numbers[0]!;
    created.data.order_numbers.forEach((no) => ours.add(no));

    // 3. The AWB arrives by webhook. Ask for it now rather than wait for the AWB delay;
    //    on a manual clock the delivery then waits for an advance: 0 ms sends what is due.
    const webhook = within(receiver.next(), timeoutMs, noWebhook(orderNo, timeoutMs, clock.data.mode, plan.chaos), signal);
    webhook.catch(() => undefined); // awaited below; a timeout while the requests run is reported there
    const generated = await control.POST('/__sandbox/orders/{order_no}/awb', { params: { path: { order_no: orderNo } } });
    if (generated.error) throw new Error(`POST /__sandbox/orders/${orderNo}/awb: ${generated.error.message}`);
    if (clock.data.mode === 'manual') {
      const advanced = await control.POST('/__sandbox/clock/advance', { body: { ms: 0 } });
      if (advanced.error) throw new Error(`POST /__sandbox/clock/advance: ${advanced.error.message}`);
    }
    const { id: webhookId, event } = await webhook;
    if (event.order_no !== orderNo) throw new Error(`the webhook names order ${event.order_no}, not ${orderNo}`);

    // 4. Track it: 404 until the pick-up scan, then play the journey step by step.
    const statuses: string[] = [];
    let delivered: Tracking | undefined;
    while (!delivered) {
      const tracked = await api.GET('/v1/order/tracking/{order_no}', { params: { path: { order_no: event.awb } } });
      if (tracked.data) {
        if (statuses.at(-1) !== tracked.data.last_status) statuses.push(tracked.data.last_status);
        if (tracked.data.last_status === '2') delivered = tracked.data;
      } else if (tracked.response.status !== 404) throw new Error(`tracking answered ${tracked.response.status}`);
      if (delivered) break;
      const step = await control.POST('/__sandbox/orders/{order_no}/advance', { params: { path: { order_no: orderNo } } });
      if (step.error) throw new Error(`the journey ended before delivery: ${step.error.message}`);
    }

    // 5. A 400 names the field; a 404 is "Record Not Found".
    const bad = await api.POST('/v1/order', { body: { ...ORDER, items: [{ ...ORDER.items[0]!, item_weight: 'heavy' }] } });
    const missing = await api.GET('/v1/order/tracking/{order_no}', { params: { path: { order_no: 'JN0000000000' } } });
    if (!bad.error || !missing.error) throw new Error('expected a 400 and a 404');
    return {
      orderNumbers: created.data.order_numbers,
      awb: event.awb,
      webhookId,
      statuses,
      delivered,
      badRequestField: bad.error.errors[0]?.field ?? '',
      notFoundMessage: missing.error.message,
    };
  } finally {
    try {
      await giveBack();
    } finally {
      receiver.close();
    }
  }
}

/** Why no AWB webhook came: what to look at, and the chaos that delays it when the client has one. */
function noWebhook(orderNo: string, timeoutMs: number, mode: string, chaos: string[]): string {
  const late = chaos.includes('late') ? ' The client\'s webhook chaos "late" holds each first attempt 10 minutes of sandbox time; run the example with a client without it.' : '';
  return (
    `No AWB webhook for order ${orderNo} within ${timeoutMs / 1000} s (${mode} clock).${late} ` +
    `Its deliveries: GET /__sandbox/webhooks/deliveries?order_no=${orderNo}.`
  );
}

// Run as a script (not imported by the test): npx tsx examples/client.ts <base URL> <token>
// SIGINT or SIGTERM stops the run and puts the webhook settings back first; a second one quits at once.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  // The token: the second argument, else SANDBOX_TOKENS when it holds one (with several, which client to act as is yours to say).
  const fromEnv = (process.env.SANDBOX_TOKENS ?? '').split(',').filter((t) => t.trim() !== '');
  if (process.argv[3] === undefined && fromEnv.length > 1) {
    console.error(`SANDBOX_TOKENS holds ${fromEnv.length} tokens; pass the one to use as the second argument`);
    process.exit(2);
  }
  const [baseUrl = 'http://127.0.0.1:4010', token = fromEnv[0]?.trim() ?? ''] = process.argv.slice(2);
  if (token === '') {
    console.error('No token: pass the one to use as the second argument (npx tsx examples/client.ts <base URL> <token>), or set SANDBOX_TOKENS to it');
    process.exit(2);
  }
  const stop = new AbortController();
  for (const [name, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(name, () => {
      console.error(`${name}: stopping, after putting the client's webhook settings back (${name} again quits at once).`);
      process.exitCode = code;
      process.once(name, () => process.exit(code));
      stop.abort(new Error(`stopped by ${name}`));
    });
  }
  try {
    console.log(JSON.stringify(await runExample(baseUrl, token, { signal: stop.signal }), null, 2));
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode ??= 1;
  }
}
