/**
 * An example client of the Shipping Order Service API, written with openapi-fetch
 * against types that openapi-typescript generated from the specs the sandbox serves
 * (examples/types/). It walks the whole loop: create an order, receive and verify
 * its AWB webhook, track the parcel to delivery, and handle a 400 and a 404.
 *
 * It leaves the client's webhook settings as they were. It points the client's webhook
 * at a receiver of its own for the run, then puts the URL, secret and chaos back when
 * they were set through the API, or, on a client that had no orders yet, resets the
 * client, which takes the endpoint back to what the config file or flags say. Any other
 * client it refuses to touch, saying how to run it with a client of its own.
 *
 * Against a running sandbox (any clock; it drives the order with the control API):
 *
 *   npx tsx examples/client.ts http://127.0.0.1:4010 <token>
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
    close: () => server.close(),
  };
}

/**
 * Points the client's webhook at `url` for the run and returns how to give it back.
 * Settings made through the API are put back as they were. A URL from the config file or
 * flags (or none) cannot be put back through the API; only a reset returns to it, and a
 * reset removes the client's orders, so that is done only for a client that had none.
 * Setting a URL also sends every delivery the sandbox held while there was none: on a
 * client with orders and no URL, that would hand their webhooks to this example.
 */
async function borrowWebhook(control: Control, url: string, secret: string): Promise<() => Promise<void>> {
  const before = await control.GET('/__sandbox/webhook');
  if (before.error) throw new Error(`GET /__sandbox/webhook: ${before.error.message}`);
  const { url: previousUrl, secret: previousSecret, chaos, source } = before.data;
  let giveBack: () => Promise<unknown>;
  if (source === 'runtime' && previousUrl) {
    giveBack = () => control.PUT('/__sandbox/webhook', { body: { url: previousUrl, secret: previousSecret, chaos } });
  } else {
    const orders = await control.GET('/__sandbox/orders', { params: { query: { limit: 1 } } });
    if (orders.error) throw new Error(`GET /__sandbox/orders: ${orders.error.message}`);
    if (orders.data.total > 0) {
      throw new Error(
        `This client's webhook URL (${previousUrl ?? 'none'}, from ${source}) cannot be put back through the API, and the client has orders: ` +
          'the example leaves it alone. Run it with a client of its own: a second token ' +
          '(npm start -- --token <your token> --token example-token, then npx tsx examples/client.ts <url> example-token), ' +
          'or a sandbox of its own (npm start -- --port 4011 --data :memory: --token example-token).',
      );
    }
    giveBack = () => control.POST('/__sandbox/reset');
  }
  const set = await control.PUT('/__sandbox/webhook', { body: { url, secret } });
  if (set.error) throw new Error(`PUT /__sandbox/webhook: ${set.error.message}`);
  return async () => void (await giveBack());
}

/**
 * Runs the loop against a sandbox at `baseUrl` as the client of `token`, and leaves the
 * client's webhook settings as they were (see `borrowWebhook`).
 *
 * @example const run = await runExample('http://127.0.0.1:4010', 'sbx_...')
 */
export async function runExample(baseUrl: string, token: string): Promise<ExampleRun> {
  const headers = { Authorization: `Bearer ${token}` };
  const api = createClient<ProviderPaths>({ baseUrl, headers });
  const control = createClient<ControlPaths>({ baseUrl, headers });
  const ours = new Set<string>();
  const receiver = await awbReceiver(SECRET, ours);
  let giveBack: () => Promise<void> = async () => undefined;
  try {
    // 1. Point this client's webhook at the receiver, for this run only.
    giveBack = await borrowWebhook(control, receiver.url, SECRET);

    // 2. Create the order; the answer has order numbers, no AWB.
    const created = await api.POST('/v1/order', { body: ORDER });
    if (created.error) throw new Error(`POST /v1/order: ${created.error.message}`);
    const orderNo = created.data.order_numbers[0]!;
    created.data.order_numbers.forEach((no) => ours.add(no));

    // 3. The AWB arrives by webhook. Ask for it now rather than wait for the AWB delay.
    const webhook = receiver.next();
    const generated = await control.POST('/__sandbox/orders/{order_no}/awb', { params: { path: { order_no: orderNo } } });
    if (generated.error) throw new Error(`POST /__sandbox/orders/${orderNo}/awb: ${generated.error.message}`);
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
    await giveBack();
    receiver.close();
  }
}

// Run as a script (not imported by the test): npx tsx examples/client.ts <base URL> <token>
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const [baseUrl = 'http://127.0.0.1:4010', token = process.env.SANDBOX_TOKEN ?? ''] = process.argv.slice(2);
  console.log(JSON.stringify(await runExample(baseUrl, token), null, 2));
}
