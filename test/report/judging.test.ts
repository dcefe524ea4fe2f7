import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import supertest from 'supertest';
import { createSandbox } from '../../src/index.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_A, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await sandbox?.close();
  sandbox = undefined;
});

/**
 * The wall clock held where it is (`Date.now`, which a real clock and the report's count of
 * real time read) and moved on only by `pass`: a stall of a busy machine between two
 * requests adds no real time the test did not mean.
 */
function heldWall(): { pass: (ms: number) => void } {
  let now = Date.now();
  vi.spyOn(Date, 'now').mockImplementation(() => now);
  return { pass: (ms) => void (now += ms) };
}

/** A create with these order codes. */
const create = (s: TestSandbox, code: string) => {
  const request = createRequest(1);
  request.items[0]!.order_code = code;
  return s.call('POST', '/v1/order', { body: request });
};

const fault = (s: TestSandbox, action: Record<string, unknown>) => s.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action, times: 1 } });

async function item(s: TestSandbox, id: string): Promise<{ status: string; detail: string }> {
  const report = (await s.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string; detail: string }> };
  return report.items.find((i) => i.id === id)!;
}

describe('the readiness report judges a retry as the same request sent again', () => {
  it('leaves a create that met a 503 not handled while other creates follow, and handled once it is sent again', async () => {
    sandbox = await testSandbox();
    await fault(sandbox, { type: 'status', status: 503, headers: { 'Retry-After': '1' } });
    expect((await create(sandbox, 'LOST-503')).status).toBe(503);
    expect((await create(sandbox, 'NEXT-1')).status).toBe(201);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'not_handled' });

    await sandbox.advance(1_000);
    expect((await create(sandbox, 'LOST-503')).status).toBe(201);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'handled' });
  });

  it('takes a 503 the client asked for with Prefer: code=503 as one to retry', async () => {
    sandbox = await testSandbox();
    const request = createRequest(1);
    expect((await sandbox.call('POST', '/v1/order', { body: request, headers: { Prefer: 'code=503' } })).status).toBe(503);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'not_handled' });
    expect((await sandbox.call('POST', '/v1/order', { body: request })).status).toBe(201);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'handled' });
  });

  it('counts a create that met a 503 as missed once another create meets one before it is sent again', async () => {
    sandbox = await testSandbox();
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 503 }, times: 2 } });
    expect((await create(sandbox, 'LOST-A')).status).toBe(503);
    expect((await create(sandbox, 'B')).status).toBe(503);
    expect((await create(sandbox, 'B')).status).toBe(201);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of 2/) });
  });

  it('leaves a dropped create not handled when the client moves on to another', async () => {
    sandbox = await testSandbox();
    await fault(sandbox, { type: 'reset' });
    await create(sandbox, 'LOST-RESET').catch(() => undefined);
    expect((await create(sandbox, 'NEXT-1')).status).toBe(201);
    expect(await item(sandbox, 'fault.dropped')).toMatchObject({ status: 'not_handled' });
  });

  it("does not count a Prefer's documented 201, which stored nothing, as a create", async () => {
    sandbox = await testSandbox();
    expect((await sandbox.call('POST', '/v1/order', { body: createRequest(2), headers: { Prefer: 'code=201' } })).status).toBe(201);
    expect(await item(sandbox, 'op.create-order')).toMatchObject({ status: 'not_exercised' });
    expect(await item(sandbox, 'create.multi-item')).toMatchObject({ status: 'not_exercised', detail: 'Not exercised yet. Exercised when: A create with two or more items answered 201.' });
  });

  it("does not count a fault rule's made-up 201 as a create", async () => {
    sandbox = await testSandbox();
    await fault(sandbox, { type: 'status', status: 201, body: { success: true, message: 'Data saved successfully.', batch_id: '730016604512', order_numbers: ['512345678901'] } });
    expect((await create(sandbox, 'FAKE-201')).status).toBe(201);
    expect(await item(sandbox, 'op.create-order')).toMatchObject({ status: 'not_exercised' });
  });
});

/** Another parcel to another receiver: another body, not the refused one sent again. */
function anotherParcel(n: number) {
  const request = createRequest(1);
  Object.assign(request.items[0]!, { order_code: `OTHER-${n}`, receiver_name: `Receiver ${n}` });
  return request;
}

describe('a retry, request by request', () => {
  it('judges each create that met a 503 by its own retry: two met before either is sent again, both sent again, both handled', async () => {
    sandbox = await testSandbox();
    await sandbox.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'status', status: 503 }, times: 2 } });
    expect((await create(sandbox, 'QA')).status).toBe(503);
    expect((await create(sandbox, 'QB')).status).toBe(503);
    expect((await create(sandbox, 'QA')).status).toBe(201);
    expect((await create(sandbox, 'QB')).status).toBe(201);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'handled', detail: 'Handled (2 of 2).' });
  });

  it('counts other requests of the operation sent before a Retry-After ended as hammering, even when the retry itself waits', async () => {
    sandbox = await testSandbox();
    await fault(sandbox, { type: 'status', status: 503, headers: { 'Retry-After': '2' } });
    expect((await create(sandbox, 'HA')).status).toBe(503);
    for (const code of ['H1', 'H2']) expect((await create(sandbox, code)).status).toBe(201);
    await sandbox.advance(2_000);
    expect((await create(sandbox, 'HA')).status).toBe(201);
    expect(await item(sandbox, 'fault.retry-after')).toMatchObject({ status: 'not_handled', missed: 1, handled: 1 });
  });

  it('counts a refused create sent a third time unchanged, with other creates between (a retry queue), as missed; a second time later (a suite run twice) is not', async () => {
    sandbox = await testSandbox();
    const invalid = createRequest(1);
    invalid.items[0]!.item_weight = 'heavy' as never;
    for (const code of ['OK-1', 'OK-2']) {
      expect((await sandbox.call('POST', '/v1/order', { body: invalid })).status).toBe(400);
      expect((await create(sandbox, code)).status).toBe(201);
    }
    expect(await item(sandbox, 'error.create-400')).toMatchObject({ status: 'handled', missed: 0 });
    expect((await sandbox.call('POST', '/v1/order', { body: invalid })).status).toBe(400);
    expect(await item(sandbox, 'error.create-400')).toMatchObject({ status: 'not_handled', missed: 1, detail: expect.stringMatching(/^Missed 1 of 3/) });
  });

  it('ends each refused create handled or missed once: one sent again later is missed, and the change after it is not also counted handled', async () => {
    sandbox = await testSandbox();
    const invalid = createRequest(1);
    invalid.items[0]!.item_weight = 'heavy' as never;
    for (let n = 0; n < 10; n += 1) {
      expect((await sandbox.call('POST', '/v1/order', { body: invalid })).status).toBe(400);
      expect((await create(sandbox, `FIXED-${n}`)).status).toBe(201);
    }
    // The first two were changed before being sent again (a suite run twice); each later one is the mistake sent again.
    expect(await item(sandbox, 'error.create-400')).toMatchObject({ status: 'not_handled', exercised: 10, handled: 2, missed: 8 });
  });

  it('ends each refused tracking read handled or missed once, also when one sent again later is sent again right after', async () => {
    const client = (sandbox = await testSandbox());
    const bad = () => client.call('GET', '/v1/order/tracking/bad!');
    const good = () => client.call('GET', '/v1/order/tracking/SBXDLV00000001');
    for (const send of [bad, good, bad, good, bad, bad, good]) await send();
    expect(await item(sandbox, 'error.tracking-400')).toMatchObject({ exercised: 4, handled: 2, missed: 2 });
  });

  it('counts a refused tracking read sent a third time as missed also when it comes right after the second, and the fix after a fourth not as handled', async () => {
    const client = (sandbox = await testSandbox());
    const bad = () => client.call('GET', '/v1/order/tracking/bad!');
    const good = () => client.call('GET', '/v1/order/tracking/SBXDLV00000001');
    // The first is fixed; the second is sent again right after; the third and the fourth are the mistake sent a third time and more.
    for (const send of [bad, good, bad, bad, bad, good]) await send();
    expect(await item(sandbox, 'error.tracking-400')).toMatchObject({ exercised: 4, handled: 1, missed: 3 });
  });

  it('counts a refused create once when another create came between it and the same body answered without its Prefer', async () => {
    sandbox = await testSandbox();
    const body = createRequest(1);
    // Refused once, another create, then the body without its Prefer: the create between settled the refusal.
    expect((await sandbox.call('POST', '/v1/order', { body, headers: { Prefer: 'code=403' } })).status).toBe(403);
    expect((await sandbox.call('POST', '/v1/order', { body: anotherParcel(0) })).status).toBe(201);
    expect((await sandbox.call('POST', '/v1/order', { body })).status).toBe(201);
    expect(await item(sandbox, 'error.create-403')).toMatchObject({ exercised: 1, handled: 1, missed: 0 });
  });

  it('counts a refused create sent a third time missed once, not also handled when the same body is answered after another create', async () => {
    sandbox = await testSandbox();
    const body = createRequest(1);
    for (let n = 0; n < 3; n += 1) expect((await sandbox.call('POST', '/v1/order', { body, headers: { Prefer: 'code=403' } })).status).toBe(403);
    expect((await sandbox.call('POST', '/v1/order', { body: anotherParcel(0) })).status).toBe(201);
    expect((await sandbox.call('POST', '/v1/order', { body })).status).toBe(201);
    // The first two sent again right after, the third sent a third time: three missed, each once.
    expect(await item(sandbox, 'error.create-403')).toMatchObject({ exercised: 3, handled: 0, missed: 3 });
  });

  it('does not count a refused create missed for being sent a third time as handled too when it is then answered (its Prefer dropped)', async () => {
    sandbox = await testSandbox();
    const body = createRequest(1);
    for (const [n, prefer] of [true, false, true, false, true].entries()) {
      const res = await sandbox.call('POST', '/v1/order', prefer ? { body, headers: { Prefer: 'code=403' } } : { body: anotherParcel(n) });
      expect(res.status).toBe(prefer ? 403 : 201);
    }
    // The third 403 is the miss; the same body without its Prefer, answered 201, says the refusals were not the body's.
    expect((await sandbox.call('POST', '/v1/order', { body })).status).toBe(201);
    expect(await item(sandbox, 'error.create-403')).toMatchObject({ status: 'not_handled', exercised: 3, handled: 2, missed: 1 });
  });

  it('counts the same mistake sent again as unchanged however the rest of the body changed: new order codes, an id the provider ignores, keys in another order', async () => {
    sandbox = await testSandbox();
    const invalid = (n: number) => {
      const request = createRequest(1) as ReturnType<typeof createRequest> & { request_id?: string };
      request.items[0]!.item_weight = 'heavy' as never;
      request.items[0]!.order_code = `RETRY-${n}`;
      request.request_id = `req-${n}`;
      // Every other try with its keys in the reverse order.
      return n % 2 === 0 ? request : Object.fromEntries(Object.entries(request).reverse());
    };
    for (let n = 0; n < 5; n += 1) expect((await sandbox.call('POST', '/v1/order', { body: invalid(n) })).status).toBe(400);
    // Each sent again right after, and from the third on sent a third time and more: all five missed.
    expect(await item(sandbox, 'error.create-400')).toMatchObject({ status: 'not_handled', missed: 5, handled: 0 });
  });

  it('counts different orders refused for the same missing field, each sent once, as none sent again', async () => {
    sandbox = await testSandbox();
    for (const [n, receiver] of ['Ana', 'Budi', 'Citra'].entries()) {
      const order = createRequest(1);
      Object.assign(order.items[0]!, { order_code: `SHOP-${n}`, receiver_name: receiver, item_weight: 1 + n });
      delete (order.items[0] as Partial<typeof order.items[0]>).receiver_phone;
      expect((await sandbox.call('POST', '/v1/order', { body: order })).status).toBe(400);
    }
    expect(await item(sandbox, 'error.create-400')).toMatchObject({ missed: 0, handled: 2 });
  });

  it('counts the same over-long batch sent again under new order codes as unchanged', async () => {
    sandbox = await testSandbox();
    for (let n = 0; n < 3; n += 1) {
      const batch = createRequest(101);
      batch.items.forEach((parcel, i) => (parcel.order_code = `TRY${n}-${i}`));
      expect((await sandbox.call('POST', '/v1/order', { body: batch })).status).toBe(400);
    }
    expect(await item(sandbox, 'error.create-400')).toMatchObject({ status: 'not_handled', missed: 3, handled: 0 });
  });

  it('counts a fix of the field the 400 named, or another mistake, as changed before sending again', async () => {
    sandbox = await testSandbox();
    const bad = createRequest(1);
    bad.items[0]!.item_weight = 'heavy' as never;
    expect((await sandbox.call('POST', '/v1/order', { body: bad })).status).toBe(400);
    const otherMistake = createRequest(1);
    otherMistake.items[0]!.item_weight = -1 as never;
    expect((await sandbox.call('POST', '/v1/order', { body: otherMistake })).status).toBe(400);
    expect((await create(sandbox, 'FIXED')).status).toBe(201);
    expect(await item(sandbox, 'error.create-400')).toMatchObject({ status: 'handled', missed: 0, handled: 2 });
  });

  it('does not count a refusal a Prefer asked for against the same body sent again without it: that body is fine', async () => {
    sandbox = await testSandbox();
    const body = createRequest(1);
    expect((await sandbox.call('POST', '/v1/order', { body, headers: { Prefer: 'code=403' } })).status).toBe(403);
    expect((await sandbox.call('POST', '/v1/order', { body })).status).toBe(201);
    expect(await item(sandbox, 'error.create-403')).toMatchObject({ status: 'handled' });
  });
});

/** A real server whose client's webhooks go to a receiver that acknowledges every one. */
async function withReceiver() {
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => (received.push(body), res.writeHead(200).end()));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const server = await createSandbox({ port: 0, clock: 'manual', logLevel: 'silent', awbDelay: '1m', tokens: ['token-t'], webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` });
  const call = (method: string, path: string, body?: unknown, signal?: AbortSignal) =>
    fetch(`${server.url}${path}`, { method, headers: { authorization: 'Bearer token-t', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), signal });
  const report = async (id: string) => ((await (await call('GET', '/__sandbox/report')).json()) as { items: Array<{ id: string; status: string; detail: string }> }).items.find((i) => i.id === id)!;
  const stored = async (code: string) => ((await (await call('GET', `/__sandbox/orders?q=${code}`)).json()) as { total: number }).total;
  const close = async () => {
    await server.close();
    await new Promise((r) => receiver.close(r));
  };
  return { call, report, stored, received, close };
}

/** A create of `items` items that takes 1 s while the client waits 300 ms, and goes on after its wait. */
async function timedOutCreate(code: string, items = 1) {
  const t = await withReceiver();
  const request = createRequest(items);
  request.items.forEach((item, n) => (item.order_code = n === 0 ? code : `${code}-${n}`));
  await t.call('POST', '/__sandbox/faults', { match: { operation_id: 'createOrder' }, action: { type: 'latency', ms: 1_000 }, times: 1 });
  await expect(t.call('POST', '/v1/order', request, AbortSignal.timeout(300))).rejects.toThrow();
  // Its order exists though the client never heard of it.
  await expect.poll(() => t.stored(code), { timeout: 3_000 }).toBe(1);
  return { ...t, request };
}

describe('a create the client gave up on, which the sandbox carried out', () => {
  /** A real server with a receiver that acknowledges every webhook, and a create that takes 1 s while the client waits 300 ms. */
  it('counts sending it again, which makes a second shipment, as missed', async () => {
    const t = await timedOutCreate('TWICE-1');
    try {
      expect((await t.call('POST', '/v1/order', t.request)).status).toBe(201);
      expect(await t.report('fault.timeout')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of 1/) });
    } finally {
      await t.close();
    }
  });

  it('counts learning of its order from the AWB webhook, without sending it again, as handled', async () => {
    const t = await timedOutCreate('ONCE-1');
    try {
      expect(await t.report('fault.timeout')).toMatchObject({ status: 'not_handled', detail: expect.stringContaining('(1 not sent again)') });
      await t.call('POST', '/__sandbox/clock/advance', { ms: 60_000 });
      await expect.poll(() => t.received.some((body) => body.includes('ONCE-1')), { timeout: 5_000 }).toBe(true);
      await expect.poll(async () => (await t.report('fault.timeout')).status, { timeout: 3_000 }).toBe('handled');
    } finally {
      await t.close();
    }
  });

  it('counts sending its shipments again under new order codes as missed too: a duplicate all the same', async () => {
    const t = await timedOutCreate('RECODED-1');
    try {
      const recoded = structuredClone(t.request);
      recoded.items[0]!.order_code = 'RECODED-2';
      expect((await t.call('POST', '/v1/order', recoded)).status).toBe(201);
      await t.call('POST', '/__sandbox/clock/advance', { ms: 60_000 });
      await expect.poll(() => t.received.length, { timeout: 5_000 }).toBe(2);
      expect(await t.report('fault.timeout')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of 1/) });
      // The miss names both creates: the one given up on, and the one that duplicated it.
      const { events } = (await (await t.call('GET', '/__sandbox/report')).json()) as { events: Array<{ item: string; outcome: string; note: string }> };
      expect(events.find((e) => e.item === 'fault.timeout' && e.outcome === 'missed')?.note).toBe(
        'sent again under new order codes although the create it gave up on (order code "RECODED-1") had been carried out: a duplicate shipment (POST /v1/order (order code "RECODED-2") → 201)',
      );
    } finally {
      await t.close();
    }
  });

  it('counts the same shipments built again (keys in another order, an id the provider ignores) under new order codes as a duplicate too', async () => {
    const t = await timedOutCreate('REBUILT-1');
    try {
      const reversed = (value: object) => Object.fromEntries(Object.entries(value).reverse());
      const rebuilt = { client_request_id: 'attempt-2', ...reversed({ ...t.request, items: t.request.items.map((item) => reversed({ ...item, order_code: 'REBUILT-2' })) }) };
      expect((await t.call('POST', '/v1/order', rebuilt)).status).toBe(201);
      const { events } = (await (await t.call('GET', '/__sandbox/report')).json()) as { events: Array<{ item: string; outcome: string; note: string }> };
      expect(events.find((e) => e.item === 'fault.timeout' && e.outcome === 'missed')?.note).toMatch(/^sent again under new order codes although the create it gave up on \(order code "REBUILT-1"\) had been carried out: a duplicate shipment/);
    } finally {
      await t.close();
    }
  });

  it('counts the same shipments under new order codes as a second shipment also after the AWB webhook was acknowledged, until a new run', async () => {
    const t = await timedOutCreate('HEARD-1');
    try {
      await t.call('POST', '/__sandbox/clock/advance', { ms: 60_000 });
      await expect.poll(async () => (await t.report('fault.timeout')).status, { timeout: 5_000 }).toBe('handled');
      // A receiver that answers shows nothing of what the create logic knows: sent again under new codes, it is a duplicate.
      const again = structuredClone(t.request);
      again.items[0]!.order_code = 'HEARD-2';
      expect((await t.call('POST', '/v1/order', again)).status).toBe(201);
      expect(await t.report('fault.timeout')).toMatchObject({ status: 'not_handled' });
      // A suite that creates the same fixture in its next test starts a run of its own.
      expect((await t.call('POST', '/__sandbox/runs', { name: 'next' })).status).toBe(201);
      again.items[0]!.order_code = 'HEARD-3';
      expect((await t.call('POST', '/v1/order', again)).status).toBe(201);
      expect(await t.report('fault.timeout')).toMatchObject({ status: 'not_exercised' });
    } finally {
      await t.close();
    }
  });

  it('tells a create of 50 items (a body the report does not keep) by its order codes all the same', async () => {
    const t = await timedOutCreate('BIG-1', 50);
    try {
      await t.call('POST', '/__sandbox/clock/advance', { ms: 60_000 });
      await expect.poll(() => t.received.length, { timeout: 10_000 }).toBe(50);
      await expect.poll(async () => (await t.report('fault.timeout')).status, { timeout: 3_000 }).toBe('handled');
    } finally {
      await t.close();
    }
  });

  it('counts the AWB webhook acknowledged while the create was still being answered (a dribble) as heard', async () => {
    const t = await withReceiver();
    try {
      const request = createRequest(1);
      request.items[0]!.order_code = 'DRIB-1';
      await t.call('POST', '/__sandbox/faults', { match: { operation_id: 'createOrder' }, action: { type: 'dribble', bytes_per_second: 5 }, times: 1 });
      const gaveUp = new AbortController();
      const answer = t.call('POST', '/v1/order', request, gaveUp.signal).then((r) => r.text());
      await expect.poll(() => t.stored('DRIB-1'), { timeout: 3_000 }).toBe(1);
      await t.call('POST', '/__sandbox/clock/advance', { ms: 60_000 });
      await expect.poll(() => t.received.length, { timeout: 5_000 }).toBe(1);
      gaveUp.abort();
      await expect(answer).rejects.toThrow();
      await expect.poll(async () => (await t.report('fault.timeout')).status, { timeout: 3_000 }).toBe('handled');
    } finally {
      await t.close();
    }
  });
});

describe('a run', () => {
  it('does not judge a request that arrived before the run started, though it was answered after', async () => {
    const server = await createSandbox({ port: 0, clock: 'manual', logLevel: 'silent', tokens: ['token-r'] });
    try {
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${server.url}${path}`, { method, headers: { authorization: 'Bearer token-r', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      await call('POST', '/__sandbox/faults', { match: { operation_id: 'createOrder' }, action: { type: 'latency', ms: 1_000 }, times: 1 });
      const held = call('POST', '/v1/order', createRequest(1));
      await new Promise((r) => setTimeout(r, 300));
      expect((await call('POST', '/__sandbox/runs', { name: 'new' })).status).toBe(201);
      expect((await held).status).toBe(201);
      const report = (await (await call('GET', '/__sandbox/report')).json()) as { run: { name: string }; items: Array<{ id: string; status: string }> };
      expect(report.run.name).toBe('new');
      expect(report.items.find((i) => i.id === 'op.create-order')?.status).toBe('not_exercised');
    } finally {
      await server.close();
    }
  });
});

describe('what the report grades', () => {
  it("grades none of an admin's requests acting for the client, nor those of its read-only token", async () => {
    sandbox = await testSandbox({
      adminTokens: ['admin-token'],
      clients: [
        { token: TOKEN_A, id: 'client-a' },
        { token: 'token-a-ro', id: 'client-a', role: 'read_only' },
      ],
    });
    const created = await create(sandbox, 'MINE');
    const orderNo = created.body.order_numbers[0] as string;
    const { awb } = (await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`)).body;
    await sandbox.call('GET', `/v1/order/tracking/${awb}`, { token: 'admin-token', headers: { 'X-Sandbox-Client': 'client-a' } });
    await sandbox.call('GET', `/v1/order/tracking/${awb}`, { token: 'token-a-ro' });
    expect(await item(sandbox, 'op.tracking')).toMatchObject({ status: 'not_exercised' });
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'not_exercised' });
    // The client's own read is graded.
    await sandbox.call('GET', `/v1/order/tracking/${awb}`);
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'not_handled' });
  });
});

describe('a create whose body did not parse', () => {
  it('is not taken for the one before it: two different malformed bodies are not the same request sent again, nor a body the sandbox could not decode', async () => {
    const s = (sandbox = await testSandbox());
    const raw = (body: string, headers: Record<string, string> = {}) => supertest(s.app).post('/v1/order').set('Authorization', `Bearer ${TOKEN_A}`).set('Content-Type', 'application/json').set(headers).send(body);
    expect((await raw('{"items": [')).status).toBe(400);
    expect((await raw('{"items": [}')).status).toBe(400);
    expect((await raw('not gzip', { 'Content-Encoding': 'gzip' })).status).toBe(400);
    expect((await raw('not gzip either', { 'Content-Encoding': 'gzip' })).status).toBe(400);
    const json = (await s.call('GET', '/__sandbox/report')).body as { events: Array<{ item: string; outcome: string; note: string }> };
    expect(json.events.filter((e) => e.outcome === 'missed')).toEqual([]);
    // The client that fixes its body is told so.
    expect((await create(s, 'FIXED')).status).toBe(201);
    expect(await item(s, 'error.create-400')).toMatchObject({ status: 'handled' });
  });

  it('is the same request when its bytes are the same: a malformed body sent again unchanged is missed', async () => {
    const s = (sandbox = await testSandbox());
    const raw = (body: string) => supertest(s.app).post('/v1/order').set('Authorization', `Bearer ${TOKEN_A}`).set('Content-Type', 'application/json').send(body);
    expect((await raw('{"items": [')).status).toBe(400);
    expect((await raw('{"items": [')).status).toBe(400);
    expect(await item(s, 'error.create-400')).toMatchObject({ status: 'not_handled' });
  });

  it('is the same request when a large body (checked off the loop) is sent again with the same field error', async () => {
    const s = (sandbox = await testSandbox());
    const bad = createRequest(100);
    for (const each of bad.items) (each as unknown as Record<string, unknown>).note = 'x'.repeat(600);
    bad.items[5]!.item_weight = 'heavy' as never;
    expect(JSON.stringify(bad).length).toBeGreaterThan(64 * 1024);
    expect((await s.call('POST', '/v1/order', { body: bad })).status).toBe(400);
    expect((await create(s, 'BETWEEN')).status).toBe(201);
    expect((await s.call('POST', '/v1/order', { body: bad })).status).toBe(400);
    expect((await s.call('POST', '/v1/order', { body: bad })).status).toBe(400);
    expect(await item(s, 'error.create-400')).toMatchObject({ status: 'not_handled' });
  });
});

describe('a failure’s examples', () => {
  it('names the requests that missed an item in JUnit however many requests followed them (more than the event log keeps)', async () => {
    sandbox = await testSandbox({ journalSize: 5 });
    const bad = createRequest(1);
    bad.items[0]!.item_weight = 'heavy' as never;
    expect((await sandbox.call('POST', '/v1/order', { body: bad })).status).toBe(400);
    expect((await sandbox.call('POST', '/v1/order', { body: bad })).status).toBe(400);
    for (let n = 0; n < 8; n += 1) expect((await create(sandbox, `LATER-${n}`)).status).toBe(201);

    const junit = await sandbox.call('GET', '/__sandbox/report?format=junit');
    expect(junit.text).toMatch(/Last missed:\n- \S+Z sent again unchanged: POST \/v1\/order \(order code &quot;INV-1&quot;\) → 400/);
    const json = (await sandbox.call('GET', '/__sandbox/report')).body as { events: Array<{ item: string; outcome: string }> };
    expect(json.events[0]).toMatchObject({ item: 'error.create-400', outcome: 'missed' });
    expect(json.events).toHaveLength(6);
  });

  it('keeps them with --journal-size 0 too, on either store: the last three missed events of each item, and nothing else', async () => {
    sandbox = await testSandbox({ journalSize: 0 });
    const bad = createRequest(1);
    bad.items[0]!.item_weight = 'heavy' as never;
    for (let n = 0; n < 5; n += 1) expect((await sandbox.call('POST', '/v1/order', { body: bad })).status).toBe(400);
    expect((await create(sandbox, 'LATER')).status).toBe(201);
    // PostgreSQL trims in the background, at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await create(sandbox, 'LAST')).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const json = (await sandbox.call('GET', '/__sandbox/report')).body as { events: Array<{ item: string; outcome: string; note: string }> };
    expect(json.events.map((e) => `${e.item} ${e.outcome}`)).toEqual(Array.from({ length: 3 }, () => 'error.create-400 missed'));
    expect((await sandbox.call('GET', '/__sandbox/report?format=junit')).text).toMatch(/Last missed:\n- \S+Z sent again unchanged, 3 times in all: POST \/v1\/order \(order code &quot;INV-1&quot;\) → 400\n- \S+Z sent again unchanged, 4 times in all/);
  });
});

describe('Retry-After', () => {
  it('on a real clock counts real time only: a fast clock does not make an immediate retry a wait', async () => {
    sandbox = await testSandbox({ clock: 'real', speed: 3600 });
    await fault(sandbox, { type: 'status', status: 503, headers: { 'Retry-After': '5' } });
    const wall = heldWall();
    expect((await create(sandbox, 'SOON')).status).toBe(503);
    wall.pass(50); // three minutes of sandbox time, far less than the 5 s asked
    expect((await create(sandbox, 'SOON')).status).toBe(201);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'handled' });
    expect(await item(sandbox, 'fault.retry-after')).toMatchObject({ status: 'not_handled' });
  });

  it("on a manual clock counts the test's advance as the client's wait", async () => {
    sandbox = await testSandbox();
    await fault(sandbox, { type: 'status', status: 503, headers: { 'Retry-After': '30' } });
    expect((await create(sandbox, 'LATER')).status).toBe(503);
    await sandbox.advance(30_000);
    expect((await create(sandbox, 'LATER')).status).toBe(201);
    expect(await item(sandbox, 'fault.retry-after')).toMatchObject({ status: 'handled' });
  });
});

describe('a tracking 404 read again', () => {
  /** An order with its AWB, read once: 404, as before the pick-up scan. */
  async function read404(s: TestSandbox): Promise<string> {
    const orderNo = (await create(s, 'POLL')).body.order_numbers[0] as string;
    const { awb } = (await s.call('POST', `/__sandbox/orders/${orderNo}/awb`)).body;
    expect((await s.call('GET', `/v1/order/tracking/${awb}`)).status).toBe(404);
    return awb as string;
  }

  it('on a real clock counts real time only: a fast clock does not make a tight loop a wait', async () => {
    sandbox = await testSandbox({ clock: 'real', speed: 3600 });
    const wall = heldWall();
    const awb = await read404(sandbox);
    wall.pass(50); // three minutes of sandbox time
    await sandbox.call('GET', `/v1/order/tracking/${awb}`);
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of/) });
  });

  it('takes a read at once that finds the order moved on (the test advanced it) as no poll, and still misses the reads of a poller before it', async () => {
    sandbox = await testSandbox();
    const awb = await read404(sandbox);
    const orderNo = (await sandbox.call('GET', `/__sandbox/orders?q=${awb}`)).body.orders[0].order_no as string;
    expect((await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`)).status).toBe(200);
    expect((await sandbox.call('GET', `/v1/order/tracking/${awb}`)).status).toBe(200);
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'handled', detail: 'Handled (1 of 1).' });
    const polled = await read404(sandbox);
    expect((await sandbox.call('GET', `/v1/order/tracking/${polled}`)).status).toBe(404);
    const polledOrder = (await sandbox.call('GET', `/__sandbox/orders?q=${polled}`)).body.orders[0].order_no as string;
    await sandbox.call('POST', `/__sandbox/orders/${polledOrder}/advance`);
    expect((await sandbox.call('GET', `/v1/order/tracking/${polled}`)).status).toBe(200);
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of 3/) });
  });

  it('takes a 200 right after a 404 that a Prefer asked for as polling: that 404 said nothing of the order', async () => {
    sandbox = await testSandbox();
    const orderNo = (await create(sandbox, 'PREFER')).body.order_numbers[0] as string;
    const { awb } = (await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`)).body;
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`);
    expect((await sandbox.call('GET', `/v1/order/tracking/${awb}`, { headers: { prefer: 'code=404' } })).status).toBe(404);
    expect((await sandbox.call('GET', `/v1/order/tracking/${awb}`)).status).toBe(200);
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of 1/) });
  });

  it('on a manual clock counts a second of real time as the wait too, not only an advance', async () => {
    sandbox = await testSandbox();
    const awb = await read404(sandbox);
    await new Promise((r) => setTimeout(r, 1_100));
    await sandbox.call('GET', `/v1/order/tracking/${awb}`);
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'handled' });
  });
});

describe('a timeout', () => {
  it('counts a tracking read the client gave up on while its answer was dribbled, and its read again as the retry', async () => {
    const server = await createSandbox({ port: 0, clock: 'manual', logLevel: 'silent', tokens: ['token-d'] });
    try {
      const call = (method: string, path: string, body?: unknown, signal?: AbortSignal) =>
        fetch(`${server.url}${path}`, { method, headers: { authorization: 'Bearer token-d', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), signal });
      const magic = ((await (await call('GET', '/__sandbox/scenarios')).json()) as Array<{ name: string; magic_awb: string }>).find((s) => s.name === 'delivered')!.magic_awb;
      await call('POST', '/__sandbox/faults', { match: { operation_id: 'trackOrder' }, action: { type: 'dribble', bytes_per_second: 20 }, times: 1 });
      await expect(call('GET', `/v1/order/tracking/${magic}`, undefined, AbortSignal.timeout(300)).then((r) => r.text())).rejects.toThrow();
      expect((await call('GET', `/v1/order/tracking/${magic}`)).status).toBe(200);
      await expect.poll(async () => ((await (await call('GET', '/__sandbox/report')).json()) as { items: Array<{ id: string; status: string }> }).items.find((i) => i.id === 'fault.timeout')?.status).toBe('handled');
    } finally {
      await server.close();
    }
  });
});

describe('hostile text in what the report keeps', () => {
  // PostgreSQL's text holds no NUL: the report's rows take U+FFFD there, as orders do, instead of a 500.
  it('starts a run named with a NUL and shows it in the report, on every store; half a surrogate pair alone is refused, naming the name', async () => {
    sandbox = await testSandbox();
    const started = await sandbox.call('POST', '/__sandbox/runs', { body: { name: 'a\u0000b' } });
    expect(started.status).toBe(201);
    const report = await sandbox.call('GET', '/__sandbox/report');
    expect(report.status).toBe(200);
    expect(['a\u0000b', 'a\uFFFDb']).toContain(report.body.run.name);
    for (const name of ['\ud800', '\udc00x']) {
      const refused = await sandbox.call('POST', '/__sandbox/runs', { body: { name } });
      expect([refused.status, refused.body.errors[0].field]).toEqual([400, 'name']);
    }
  });

  it('judges a create that met a 503 and holds a NUL, and its retry, on every store', async () => {
    sandbox = await testSandbox();
    await fault(sandbox, { type: 'status', status: 503 });
    const body = createRequest(1, { sender_name: 'Toko\u0000 Maju' });
    expect((await sandbox.call('POST', '/v1/order', { body })).status).toBe(503);
    expect((await sandbox.call('POST', '/v1/order', { body })).status).toBe(201);
    expect(await item(sandbox, 'fault.503-retried')).toMatchObject({ status: 'handled' });
  });
});


describe('tracking reads of the magic AWBs', () => {
  it('count the operation, not a journey read to its end nor a 404 to wait on: their answers are fixtures that never change', async () => {
    sandbox = await testSandbox();
    const scenarios = (await sandbox.call('GET', '/__sandbox/scenarios')).body as Array<{ name: string; magic_awb: string }>;
    const magic = (name: string) => scenarios.find((s) => s.name === name)!.magic_awb;
    expect((await sandbox.call('GET', `/v1/order/tracking/${magic('delivered')}`)).status).toBe(200);
    expect((await sandbox.call('GET', `/v1/order/tracking/${magic('awb_failed')}`)).status).toBe(404);
    expect((await sandbox.call('GET', `/v1/order/tracking/${magic('awb_failed')}`)).status).toBe(404);
    expect(await item(sandbox, 'op.tracking')).toMatchObject({ status: 'handled' });
    expect(await item(sandbox, 'journey.read-to-end')).toMatchObject({ status: 'not_exercised' });
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'not_exercised' });
    // A 404 of an AWB of the client's own (before its pick-up scan) is exercised as before.
    const created = await create(sandbox, 'MAGIC-BESIDE');
    await sandbox.advance(60_000);
    const awb = ((await sandbox.call('GET', `/__sandbox/orders/${created.body.order_numbers[0]}`)).body as { awb_number: string }).awb_number;
    expect((await sandbox.call('GET', `/v1/order/tracking/${awb}`)).status).toBe(404);
    expect(await item(sandbox, 'error.tracking-404')).toMatchObject({ status: 'not_handled' });
  });
});
