import request from 'supertest';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveOptions } from '../../src/config/index.js';
import { LargeBodies, LARGE_BODY_BYTES } from '../../src/http/large-bodies.js';
import { compiledSpecs, PROVIDER_SPEC } from '../../src/spec/index.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_A, type TestSandbox } from '../support/sandbox.js';

/** A create of `count` items, its text larger than LARGE_BODY_BYTES for a few hundred items. */
const largeCreate = (count: number) => JSON.stringify(createRequest(count));

describe('a large JSON body is parsed and validated on a worker thread, with the answers of the turn', () => {
  let sandbox: TestSandbox;
  beforeEach(async () => {
    sandbox = await testSandbox();
  });
  afterEach(() => sandbox.close());
  const post = (body: string) => request(sandbox.app).post('/v1/order').set('authorization', `Bearer ${TOKEN_A}`).set('content-type', 'application/json').send(body);

  it('refuses a create of 3,000 items with the 400 naming items, and journals an excerpt of its body', async () => {
    const body = largeCreate(1500);
    expect(body.length).toBeGreaterThan(LARGE_BODY_BYTES);
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: 'The request is not valid; see errors.', errors: [{ field: 'items', message: 'must hold at most 100 entries' }] });
    const [entry] = (await sandbox.call('GET', '/__sandbox/requests')).body.requests;
    expect(entry).toMatchObject({ status: 400, body_truncated: { bytes: Buffer.byteLength(body) } });
    expect(body.startsWith(entry.body)).toBe(true);
  });

  it('names a wrong field of a large body as the turn would, after the parameters', async () => {
    const create = createRequest(100, {});
    create.items[99] = { ...create.items[99]!, item_name: 'x'.repeat(2000) } as never;
    const padded = JSON.stringify({ ...create, note_padding: undefined, items: create.items.map((i) => ({ ...i, item_desc: 'd'.repeat(400) })) });
    expect(padded.length).toBeGreaterThan(LARGE_BODY_BYTES);
    const res = await post(padded);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'items[99].item_name' })]));
  });

  it('answers a large body that is not JSON, or nested too deep, with the 400 naming body, journaled without a body', async () => {
    const broken = `${largeCreate(600).slice(0, -1)},`;
    expect(broken.length).toBeGreaterThan(LARGE_BODY_BYTES);
    expect((await post(broken)).body).toMatchObject({ success: false, errors: [{ field: 'body', message: 'is not valid JSON' }] });
    const deep = `{"items":${'['.repeat(70)}${']'.repeat(70)},"pad":"${'p'.repeat(LARGE_BODY_BYTES)}"}`;
    expect((await post(deep)).body.errors).toEqual([{ field: 'body', message: 'is nested deeper than 64 levels' }]);
    const journal = (await sandbox.call('GET', '/__sandbox/requests')).body.requests;
    expect(journal.map((e: { status: number; body: unknown }) => [e.status, e.body])).toEqual([
      [400, null],
      [400, null],
    ]);
  });

  it('creates the orders of a valid large body: it is parsed in its turn, as any other', async () => {
    const create = createRequest(100);
    const body = JSON.stringify({ ...create, items: create.items.map((i) => ({ ...i, item_desc: 'd'.repeat(600) })) });
    expect(body.length).toBeGreaterThan(LARGE_BODY_BYTES);
    const res = await post(body);
    expect(res.body).toMatchObject({ success: true });
    expect(res.status).toBe(201);
    expect(res.body.order_numbers).toHaveLength(100);
  });
});

describe('LargeBodies', () => {
  const { provider, control } = compiledSpecs(PROVIDER_SPEC, 100, resolveOptions({}));
  const source = { provider: provider.document, control: control.document };
  const failures: string[] = [];
  const bodies = new LargeBodies(source, (why) => failures.push(why));
  afterAll(() => bodies.close());

  it("gives the worker's verdict: the body's problems, none for a valid body", async () => {
    expect(await bodies.check('client-a', 'provider', 'createOrder', Buffer.from(largeCreate(3000)))).toEqual({ problems: [{ field: 'items', message: 'must hold at most 100 entries' }] });
    expect(await bodies.check('client-a', 'provider', 'createOrder', Buffer.from(largeCreate(2)))).toEqual({ problems: [] });
  });

  it('takes the clients in rotation: a second client does not wait behind the first one’s queue', async () => {
    const order: string[] = [];
    const body = Buffer.from(largeCreate(3000));
    const checks = [
      ...[1, 2, 3].map((n) => bodies.check('client-a', 'provider', 'createOrder', body).then(() => order.push(`a${n}`))),
      bodies.check('client-b', 'provider', 'createOrder', body).then(() => order.push('b1')),
    ];
    await Promise.all(checks);
    expect(order.indexOf('b1')).toBeLessThan(order.indexOf('a3'));
  });

  it('leaves the body it had to its turn when its worker dies, says so, and a new worker takes the next', async () => {
    // Big enough that the worker is still on it when it is ended (a small one was sometimes answered first on a busy machine).
    const body = Buffer.from(largeCreate(20_000));
    const checking = bodies.check('a', 'provider', 'createOrder', body);
    await (bodies as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    expect(await checking).toBeUndefined();
    expect(failures.at(-1)).toMatch(/large-body worker failed: it exited/);
    expect(await bodies.check('a', 'provider', 'createOrder', body)).toEqual({ problems: [{ field: 'items', message: 'must hold at most 100 entries' }] });
  });

  it('takes an answer the worker gave in time though the event loop was too busy to read it before the deadline', async () => {
    const body = Buffer.from(largeCreate(400));
    expect(await bodies.check('a', 'provider', 'createOrder', body)).toBeDefined();
    const before = failures.length;
    const checking = bodies.check('a', 'provider', 'createOrder', body);
    // The loop held past the body's 2 s deadline, as a long stall under load would (here in its check phase, whose next
    // phase is the timers'): the worker answered meanwhile.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        const until = Date.now() + 2_500;
        while (Date.now() < until);
        resolve();
      }),
    );
    expect(await checking).toEqual({ problems: [{ field: 'items', message: 'must hold at most 100 entries' }] });
    expect(failures.slice(before)).toEqual([]);
  });

  it("leaves a client's bodies past its bytes to the turn", async () => {
    const small = new LargeBodies(source, undefined, 200_000);
    const body = Buffer.from(largeCreate(400));
    const [first, second] = await Promise.all([small.check('a', 'provider', 'createOrder', body), small.check('a', 'provider', 'createOrder', body)]);
    expect(first).toEqual({ problems: [{ field: 'items', message: 'must hold at most 100 entries' }] });
    expect(second).toBeUndefined();
    await small.close();
  });

  it('leaves every body to its turn once its worker has failed three times in a row', async () => {
    const broken = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/x': { post: { operationId: 'createOrder', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Missing' } } } } } } } };
    const said: string[] = [];
    const failing = new LargeBodies({ provider: broken, control: broken }, (why) => said.push(why));
    const body = Buffer.from(largeCreate(400));
    for (let i = 0; i < 4; i++) expect(await failing.check('a', 'provider', 'createOrder', body)).toBeUndefined();
    expect(said.length).toBeGreaterThan(0);
    await failing.close();
  });
});
