import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asynchronousBodyHandler, MatchersV3, MessageConsumerPact, MessageProviderPact, PactV3, Verifier } from '@pact-foundation/pact';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { createRequest } from '../support/orders.js';

const { like, eachLike, integer, fromProviderState } = MatchersV3;
const TOKEN = 'pact-consumer-token';
const headers = { Authorization: `Bearer ${TOKEN}` };

/** The consumer's view of the tracking answer; `lastStatus` is the matcher of its last_status. */
const trackingBody = (lastStatus: unknown) => ({
  last_status: lastStatus,
  last_update: integer(1763888400),
  history: eachLike({ note: like('Pick up scan'), description: like('Shipment picked up'), branch: like('JAKARTA SELATAN HUB'), update_on: integer(1763701200) }),
});

/**
 * Waits until Pact's mock server has recorded the request just answered. The mock server
 * answers first and records the match on another thread, so a session closed right after
 * the answer can find its expected request "not received".
 */
async function recorded(pact: PactV3, port: number): Promise<void> {
  const consumer = (pact as unknown as { pact: { mockServerMatchedSuccessfully(port: number): boolean } }).pact;
  for (const deadline = Date.now() + 5_000; !consumer.mockServerMatchedSuccessfully(port) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Writes a small consumer pact of the documented operations with Pact's consumer DSL,
 * each interaction played against Pact's mock server as a client would. `deliveredStatus`
 * is what the consumer expects as the delivered order's last_status.
 */
async function writePact(dir: string, consumer: string, deliveredStatus: unknown): Promise<string> {
  const pact = new PactV3({ consumer, provider: 'shipping-sandbox', dir, logLevel: 'error' });
  const twoItems = createRequest(2);
  const badItem = { ...twoItems, items: [{ ...twoItems.items[0]!, item_weight: 'heavy' }] };
  const call = (url: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, { method, headers: { ...headers, ...(body ? { 'Content-Type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
  // One interaction per mock-server session: Pact's mock matches a provider-state path by its type, so two tracking paths in one session would both match the first.
  const play = async (path: string, status: number, body?: unknown) => {
    await pact.executeTest(async (mock) => {
      expect((await call(mock.url, body ? 'POST' : 'GET', path, body)).status).toBe(status);
      await recorded(pact, mock.port);
    });
  };
  pact
    .uponReceiving('a create request with two items')
    .withRequest({ method: 'POST', path: '/v1/order', headers: { ...headers, 'Content-Type': 'application/json' }, body: twoItems })
    .willRespondWith({ status: 201, body: { success: true, batch_id: like('730016604512'), order_numbers: eachLike('508734411209', 2) } });
  await play('/v1/order', 201, twoItems);
  pact
    .given('an order is in transit')
    .uponReceiving('a tracking request for an AWB in transit')
    .withRequest({ method: 'GET', path: fromProviderState('/v1/order/tracking/${awb}', '/v1/order/tracking/JNE0000000001'), headers })
    .willRespondWith({ status: 200, body: trackingBody('1') });
  await play('/v1/order/tracking/JNE0000000001', 200);
  pact
    .given('an order is delivered')
    .uponReceiving('a tracking request for a delivered AWB')
    .withRequest({ method: 'GET', path: fromProviderState('/v1/order/tracking/${awb}', '/v1/order/tracking/JNE0000000002'), headers })
    .willRespondWith({ status: 200, body: trackingBody(deliveredStatus) });
  await play('/v1/order/tracking/JNE0000000002', 200);
  pact
    .uponReceiving('a tracking request for an unknown AWB')
    .withRequest({ method: 'GET', path: '/v1/order/tracking/NOSUCHAWB0000', headers })
    .willRespondWith({ status: 404, body: { success: false, message: like('Not found.') } });
  await play('/v1/order/tracking/NOSUCHAWB0000', 404);
  pact
    .uponReceiving('a create request with an item weight that is not numeric text')
    .withRequest({ method: 'POST', path: '/v1/order', headers: { ...headers, 'Content-Type': 'application/json' }, body: badItem })
    .willRespondWith({ status: 400, body: { success: false, message: like('Validation failed.'), errors: eachLike({ field: like('items[0].item_weight'), message: like('must be numeric text') }) } });
  await play('/v1/order', 400, badItem);
  return join(dir, readdirSync(dir).find((f) => f.startsWith(`${consumer}-shipping-sandbox.`))!);
}

/** Verifies a pact against the running sandbox, each provider state set up through its state URL. */
const verify = (sandbox: Sandbox, pactFile: string) =>
  new Verifier({
    provider: 'shipping-sandbox',
    providerBaseUrl: sandbox.url,
    pactUrls: [pactFile],
    providerStatesSetupUrl: `${sandbox.url}/__sandbox/provider-states`,
    providerStatesSetupTeardown: true,
    customProviderHeaders: headers,
    logLevel: 'error',
  }).verifyProvider();

let sandbox: Sandbox;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-pact-'));
  sandbox = await createSandbox({ port: 0, data: ':memory:', clock: 'real', tokens: [TOKEN], awbDelay: '1m', logLevel: 'silent' });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a consumer pact verified against the sandbox', () => {
  it('verifies green, every provider state set up through POST /__sandbox/provider-states', async () => {
    const pactFile = await writePact(dir, 'shop', '2');
    await expect(verify(sandbox, pactFile)).resolves.toBeDefined();
    // The setups ran here and their teardowns removed their orders; the report's run is the verification's own.
    const report = await (await fetch(`${sandbox.url}/__sandbox/report`, { headers })).json();
    expect(report.run).toMatchObject({ name: 'pact' });
  });

  it('fails verification when the pact expects a number where the sandbox sends text', async () => {
    const pactFile = await writePact(dir, 'careless-shop', integer(2));
    await expect(verify(sandbox, pactFile)).rejects.toThrow();
  });
});

describe('a webhook message pact verified against the sandbox', () => {
  /** The consumer's view of the awb.generated webhook: `awb` is the matcher of its AWB. */
  const writeMessagePact = async (consumer: string, awb: unknown) => {
    const received: unknown[] = [];
    await new MessageConsumerPact({ consumer, provider: 'shipping-sandbox-webhooks', dir, logLevel: 'error' })
      .given('an order has its AWB')
      .expectsToReceive('an awb.generated webhook')
      .withContent({ event: 'awb.generated', order_no: like('508734411209'), order_code: like('INV-1'), courier_code: like('jne'), awb, generated_at: integer(1767225600) })
      .verify(asynchronousBodyHandler(async (body) => void received.push(body)));
    expect(received).toHaveLength(1);
    return join(dir, readdirSync(dir).find((f) => f.startsWith(`${consumer}-shipping-sandbox-webhooks.`))!);
  };

  /** The provider side as docs/guides/contract-testing.md says: the state set up through the sandbox, the message read from its delivery log. */
  const verifyMessages = (pactFile: string) => {
    const call = async (method: string, path: string, body?: unknown) =>
      (await fetch(`${sandbox.url}${path}`, { method, headers: { ...headers, 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) })).json();
    let orderNo = '';
    return new MessageProviderPact({
      provider: 'shipping-sandbox-webhooks',
      pactUrls: [pactFile],
      logLevel: 'error',
      stateHandlers: {
        'an order has its AWB': async (state) => {
          orderNo = (await call('POST', '/__sandbox/provider-states', { state, action: 'setup' })).order_no;
        },
      },
      messageProviders: {
        'an awb.generated webhook': async () => {
          const { deliveries } = await call('GET', `/__sandbox/webhooks/deliveries?order_no=${orderNo}&event=awb.generated`);
          return (await call('GET', `/__sandbox/webhooks/deliveries/${deliveries[0].id}`)).payload;
        },
      },
    }).verify();
  };

  it("verifies green with the payload of the state's awb.generated delivery, and fails a pact that expects a number as the AWB", async () => {
    await expect(verifyMessages(await writeMessagePact('shop-webhooks', like('JN0012345678')))).resolves.toBeDefined();
    await expect(verifyMessages(await writeMessagePact('careless-shop-webhooks', integer(12345678)))).rejects.toThrow(/\$\.awb/);
  });
});
