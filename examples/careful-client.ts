/**
 * The readiness recipe: the contract tests of a careful client, as the README's CI example
 * runs them (`npm run test:contract`, between `POST /__sandbox/runs` and
 * `POST /__sandbox/checks`), against a sandbox started with `--clock manual`. What makes it
 * careful is what the readiness report grades: it verifies signatures and drops repeats by
 * `webhook-id`, reads tracking only once the AWB webhook is acknowledged and again only
 * after time moved on, never sends a refused request again unchanged, and retries a 503,
 * a timeout and a dropped connection, after the wait Retry-After asks for.
 *
 * It sets the client's webhook URL to a receiver of its own until `close()`, then puts a URL,
 * secret and chaos set through the API back as they were (a URL from the config file or
 * flags, or none, cannot be put back through the API: the receiver's URL then stays). It
 * counts and tracks only its own orders: a client with held deliveries of earlier orders
 * (what the README's quick start leaves) hands those to its receiver too, which acknowledges
 * them. It advances the client's clock by 4 days and 11 minutes, to play its orders to their
 * end, and the clock keeps that time. Run it on the sandbox of a CI job (or any client of its own), as
 * `test/examples/careful-client.test.ts` does:
 *
 *   npx tsx examples/careful-client.ts http://127.0.0.1:4010 <token>
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';

/** The fields of the answers this client reads; the rest is there as JSON. */
interface Body {
  order_numbers?: string[];
  last_status?: string | null;
  [field: string]: unknown;
}

interface Answer {
  status: number;
  body: Body | string | null;
  headers: Headers;
}

const ORDER = JSON.parse(readFileSync(new URL('./order.json', import.meta.url), 'utf8')) as { items: Array<Record<string, string>> };
const SECRET = 'whsec_Y2FyZWZ1bC1jbGllbnQtc2VjcmV0LTI0Ynl0ZXM=';
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** examples/order.json with its order codes made unique, so that no create repeats another. */
function order(code: string): { items: Array<Record<string, string>> } {
  return { ...ORDER, items: ORDER.items.map((item, i) => ({ ...item, order_code: `${code}-${i + 1}` })) };
}

/** The client's HTTP side: one request, and the retrying form a careful client uses. */
function http(baseUrl: string, token: string) {
  async function once(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 10_000): Promise<Answer> {
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, headers: res.headers };
    } catch {
      return { status: 0, body: null, headers: new Headers() }; // no answer: timed out or dropped
    }
  }
  /** Sends again after no answer or a 503, waiting first as long as Retry-After says. Never after a 4xx. */
  async function withRetry(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      const answer = await once(method, path, body, headers, timeoutMs);
      if ((answer.status !== 0 && answer.status !== 503) || attempt === 3) return answer;
      await sleep(Number(answer.headers.get('retry-after') ?? 0) * 1000 + 100);
    }
  }
  return { once, withRetry };
}

/** The client's webhook receiver: verifies, drops repeats, remembers each order's AWB. */
async function receiver() {
  const verifier = new Webhook(SECRET);
  const seen = new Set<string>();
  const awbs = new Map<string, string>(); // order_no -> AWB
  /** Order numbers whose first delivery the receiver declines, as if its store were busy: the sandbox retries. */
  const declineOnce = new Set<string>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      let event: { event: string; order_no?: string; awb?: string };
      try {
        event = verifier.verify(raw, req.headers as Record<string, string>) as typeof event;
      } catch {
        return void res.writeHead(400).end(); // a bad signature or a stale timestamp
      }
      const id = String(req.headers['webhook-id']);
      if (seen.has(id)) return void res.writeHead(204).end(); // a repeat: acknowledged, nothing done twice
      if (event.order_no && declineOnce.delete(event.order_no)) return void res.writeHead(503).end();
      seen.add(id);
      if (event.event === 'awb.generated' && event.order_no && event.awb) awbs.set(event.order_no, event.awb);
      res.writeHead(204).end(); // an order it does not know is acknowledged too: the provider then stops retrying
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return { url, awbs, declineOnce, close: () => new Promise<void>((closed) => server.close(() => closed())) };
}

/**
 * Runs the careful client's contract tests against the sandbox and leaves its webhook
 * receiver listening, for the checks (`POST /__sandbox/checks`) that CI runs next;
 * `close()` then puts the client's webhook settings back (when set through the API) and
 * stops the receiver.
 *
 * @example const client = await runCarefulClient('http://127.0.0.1:4010', token); ...; await client.close()
 */
export async function runCarefulClient(baseUrl: string, token: string): Promise<{ close: () => Promise<void> }> {
  const { once, withRetry } = http(baseUrl, token);
  const hooks = await receiver();
  const expect = (what: string, answer: Answer, status: number) => {
    if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer;
  };
  const advance = async (ms: number) => expect('POST /__sandbox/clock/advance', await once('POST', '/__sandbox/clock/advance', { ms }), 200);
  const fault = async (operation_id: string, action: unknown) =>
    expect('POST /__sandbox/faults', await once('POST', '/__sandbox/faults', { match: { operation_id }, action, times: 1 }), 201);
  const before = expect('GET /__sandbox/webhook', await once('GET', '/__sandbox/webhook'), 200).body as { url: string | null; secret: string; chaos: string[]; source: string };
  const close = async () => {
    try {
      if (before.source === 'runtime' && before.url) {
        expect('putting the webhook back', await once('PUT', '/__sandbox/webhook', { url: before.url, secret: before.secret, chaos: before.chaos }), 200);
      }
    } finally {
      await hooks.close();
    }
  };
  /** The order numbers of this run's creates: only their webhooks are counted and tracked. */
  const ours = (answer: Answer) => (answer.body as Body).order_numbers!;
  try {
    // No chaos of the client's own during the run: the recipe chooses each webhook's misbehaviour.
    const pointed = await once('PUT', '/__sandbox/webhook', { url: hooks.url, secret: SECRET, chaos: [] });
    if (pointed.status === 400) {
      // Its receiver listens on this machine's loopback: a sandbox whose --webhook-targets refuses that (the image's `public`) cannot send to it.
      throw new Error(`The sandbox refused the receiver's URL ${hooks.url} (${JSON.stringify(pointed.body)}): run this client beside a sandbox that may send to 127.0.0.1 (--webhook-targets any, the CLI's default).`);
    }
    expect('PUT /__sandbox/webhook', pointed, 200);

    // Refusals are read, fixed, and never sent again unchanged.
    const invalid = order('BAD');
    invalid.items[0]!.item_weight = 'heavy';
    expect('a create with a bad weight', await once('POST', '/v1/order', invalid), 400);
    expect('a create the provider forbids', await once('POST', '/v1/order', order('FORBIDDEN'), { prefer: 'code=403' }), 403);
    expect('tracking a malformed AWB', await once('GET', '/v1/order/tracking/not_an_awb!'), 400);

    // Creates, through a 503 with Retry-After and a dropped connection, each retried.
    await fault('createOrder', { type: 'status', status: 503, headers: { 'Retry-After': '1' } });
    const first = expect('a create after a 503', await withRetry('POST', '/v1/order', order('FIRST')), 201);
    hooks.declineOnce.add(ours(first)[0]!);
    await fault('createOrder', { type: 'reset' });
    const second = expect('a create after a dropped connection', await withRetry('POST', '/v1/order', order('SECOND')), 201);
    // Webhooks that test the receiver: a duplicate, and a forged copy after one (the duplicate acknowledged first shows that
    // the receiver takes a webhook-id it has seen, so its refusal of the forged copy, under that id, is the signature's).
    const dup = expect('a create with duplicate webhooks', await withRetry('POST', '/v1/order', order('DUP'), { 'x-sandbox-webhook-chaos': 'duplicate' }), 201);
    const sig = expect('a create with a bad signature', await withRetry('POST', '/v1/order', order('SIG'), { 'x-sandbox-webhook-chaos': 'duplicate,bad_signature' }), 201);
    const orderNumbers = [first, second, dup, sig].flatMap(ours);

    // The AWBs come by webhook; the declined and refused ones again at their retry.
    await advance(60_000);
    await advance(10 * 60_000);
    const awbs = orderNumbers.map((no) => hooks.awbs.get(no)).filter((awb) => awb !== undefined);
    if (awbs.length !== orderNumbers.length) {
      throw new Error(`expected the AWB webhooks of this run's ${orderNumbers.length} orders, got ${awbs.length} (missing: ${orderNumbers.filter((no) => !hooks.awbs.has(no)).join(', ')})`);
    }

    // Tracking only after the webhook: 404 before the pick-up scan, then again once time moved on.
    for (const awb of awbs) expect(`tracking ${awb} before its pick-up`, await withRetry('GET', `/v1/order/tracking/${awb}`), 404);
    await advance(4 * 24 * 60 * 60_000);
    const [one, ...others] = awbs;
    await fault('trackOrder', { type: 'hang' });
    const delivered = expect('tracking through a timeout', await withRetry('GET', `/v1/order/tracking/${one}`, undefined, {}, 500), 200);
    const status = (delivered.body as Body).last_status;
    if (status !== '2') throw new Error(`expected the delivered status, got ${status}`);
    for (const awb of others) expect(`tracking ${awb}`, await withRetry('GET', `/v1/order/tracking/${awb}`), 200);
    return { close };
  } catch (error) {
    await close();
    throw error;
  }
}

// Run as a script: the contract tests, the checks, then the readiness summary.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  // The token: the second argument, else SANDBOX_TOKENS when it holds one (with several, which client to act as is yours to say).
  const fromEnv = (process.env.SANDBOX_TOKENS ?? '').split(',').filter((t) => t.trim() !== '');
  if (process.argv[3] === undefined && fromEnv.length > 1) {
    console.error(`SANDBOX_TOKENS holds ${fromEnv.length} tokens; pass the one to use as the second argument`);
    process.exit(2);
  }
  const [baseUrl = 'http://127.0.0.1:4010', token = fromEnv[0]?.trim() ?? ''] = process.argv.slice(2);
  if (token === '') {
    console.error('No token: pass the one to use as the second argument (npx tsx examples/careful-client.ts <base URL> <token>), or set SANDBOX_TOKENS to it');
    process.exit(2);
  }
  try {
    const client = await runCarefulClient(baseUrl, token);
    const headers = { authorization: `Bearer ${token}` };
    await fetch(`${baseUrl}/__sandbox/checks`, { method: 'POST', headers });
    await client.close();
    console.log(JSON.stringify((await (await fetch(`${baseUrl}/__sandbox/report`, { headers })).json()).summary, null, 2));
  } catch (error) {
    // A refused step says what it expected and what came; its receiver stops with the process.
    console.error((error as Error).message);
    process.exit(1);
  }
}
