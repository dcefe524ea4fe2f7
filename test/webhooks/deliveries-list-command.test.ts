import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { deliveryTable, runDeliveries, type ListedDelivery } from '../../src/client/index.js';
import { heldServer } from '../support/held-server.js';
import { createRequest } from '../support/orders.js';
import { isRefused, TestListener } from '../support/listener.js';
import { Receiver } from './receiver.js';

/**
 * Client a: one delivery failed (503), then two delivered. Client b: 105 delivered, more than a
 * page. Client c: a listen session "laptop" beside its default endpoint, one order delivered to both.
 */
const A = 'token-list-a';
const B = 'token-list-b';
const C = 'token-list-c';
let laptop: TestListener;
let sandbox: Sandbox;
let receiver: Receiver;
let down = true;
let failedOrder: string;
let deliveredOrders: string[];

const api = async (token: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sandbox.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const log = async (token: string) => (await api(token, 'GET', '/__sandbox/webhooks/deliveries?limit=1000')).body.deliveries as ListedDelivery[];
const create = async (token: string, parcels: number) => {
  const res = await api(token, 'POST', '/v1/order', createRequest(parcels));
  expect(res.status).toBe(201);
  return res.body.order_numbers as string[];
};

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runDeliveries(argv, (t) => void (stdout += t), (t) => void (stderr += t));
  return { code, stdout, stderr };
}
/** A table's rows (the header first), each split into its cells. */
const cells = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.split(/ {2,}/));

beforeAll(async () => {
  receiver = await Receiver.start();
  receiver.respond = () => (down ? { status: 503 } : { status: 200 });
  const clients = [A, B, C].map((token, i) => ({ token, id: `list-${i}`, webhook: { url: receiver.url } }));
  sandbox = await createSandbox({ port: 0, clock: 'manual', seed: 'list', awbDelay: '1m', webhookRetries: '0', logLevel: 'silent', clients });
  [failedOrder] = (await create(A, 1)) as [string];
  await sandbox.clock.advance(60_000);
  down = false;
  deliveredOrders = await create(A, 2);
  await create(B, 100);
  await create(B, 5);
  const opened = await TestListener.open(sandbox.url, { token: C, name: 'laptop', forwardTo: `${receiver.url}/laptop` });
  if (isRefused(opened)) throw new Error(`listen refused: ${JSON.stringify(opened)}`);
  laptop = opened;
  await create(C, 1);
  await sandbox.clock.advance(60_000);
  await until(async () => (await log(C)).filter((d) => d.status === 'delivered').length === 2);
  expect((await log(A)).map((d) => d.status)).toEqual(['delivered', 'delivered', 'failed']);
  expect(await log(B)).toHaveLength(105);
}, 60_000);

afterAll(async () => {
  laptop?.ws.close();
  await sandbox?.close();
  await receiver?.close();
});

describe('shipping-sandbox deliveries list', () => {
  it('prints the log newest first as a table: id, created, event, order, endpoint, status, attempts and the last HTTP status', async () => {
    const { code, stdout, stderr } = await run('list', '--url', sandbox.url, '--token', A);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const [header, ...rows] = cells(stdout);
    expect(header).toEqual(['ID', 'CREATED', 'EVENT', 'ORDER_NO', 'ENDPOINT', 'STATUS', 'ATTEMPTS', 'LAST ATTEMPT']);
    expect(rows.map(([, , event, orderNo, endpoint, status, attempts, last]) => [event, orderNo, endpoint, status, attempts, last])).toEqual([
      ['awb.generated', expect.toBeOneOf(deliveredOrders), 'default', 'delivered', '1', '200'],
      ['awb.generated', expect.toBeOneOf(deliveredOrders), 'default', 'delivered', '1', '200'],
      ['awb.generated', failedOrder, 'default', 'failed', '1', '503'],
    ]);
    expect(new Set(rows.slice(0, 2).map((row) => row[3]))).toEqual(new Set(deliveredOrders));
    expect(rows.map(([id, created]) => [id, created])).toEqual((await log(A)).map((d) => [d.id, d.created_at]));
    expect(rows[2]![1]! < rows[0]![1]!).toBe(true);
    // The columns line up: every line's cells start where the header's do.
    const starts = (line: string) => [0, ...[...line.matchAll(/ {2,}/g)].map((m) => m.index + m[0].length)];
    const lines = stdout.trimEnd().split('\n');
    expect(lines.map(starts)).toEqual(lines.map(() => starts(lines[0]!)));
  });

  it('prints the deliveries as the sandbox gives them, one JSON array, with --json', async () => {
    const { code, stdout } = await run('list', '--url', sandbox.url, '--token', A, '--json');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(await log(A));
  });

  it.each([
    [['--status', 'failed'], ['failed']],
    [['--status', 'delivered', '--event', 'awb.generated'], ['delivered', 'delivered']],
    [['--endpoint', 'default', '--status', 'failed'], ['failed']],
  ])('passes the filters %j to the sandbox and prints only what matches', async (flags, statuses) => {
    const { code, stdout } = await run('list', '--url', sandbox.url, '--token', A, ...flags);
    expect(code).toBe(0);
    expect(cells(stdout).slice(1).map((row) => row[5])).toEqual(statuses);
  });

  it('prints only the deliveries of one order with --order-no', async () => {
    const { code, stdout } = await run('list', '--url', sandbox.url, '--token', A, '--order-no', failedOrder);
    expect(code).toBe(0);
    expect(cells(stdout).slice(1).map((row) => [row[3], row[5]])).toEqual([[failedOrder, 'failed']]);
  });

  it('says plainly when no delivery matches, and prints [] with --json', async () => {
    expect(await run('list', '--url', sandbox.url, '--token', A, '--status', 'paused', '--event', 'order.cancelled')).toEqual({ code: 0, stdout: 'no webhook deliveries match --status paused --event order.cancelled\n', stderr: '' });
    expect(await run('list', '--url', sandbox.url, '--token', A, '--endpoint', 'ep_none', '--json')).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });

  it('prints 20 by default and says how many more there are', async () => {
    const { code, stdout } = await run('list', '--url', sandbox.url, '--token', B);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1 + 20 + 1);
    expect(lines.at(-1)).toBe('20 of 105 deliveries shown, newest first; --limit shows more');
    expect(cells(stdout).slice(1, 21).map((row) => row[0])).toEqual((await log(B)).slice(0, 20).map((d) => d.id));
  });

  it('follows next_cursor to gather --limit deliveries past one page of 100', async () => {
    const { code, stdout } = await run('list', '--url', sandbox.url, '--token', B, '--limit', '103', '--json');
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as ListedDelivery[]).map((d) => d.id)).toEqual((await log(B)).slice(0, 103).map((d) => d.id));
    const all = await run('list', '--url', sandbox.url, '--token', B, '--limit', '1000');
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(1 + 105);
  });

  it('exits 1 with the sandbox’s answer for an unknown token, and names --client for another client', async () => {
    const bad = await run('list', '--url', sandbox.url, '--token', 'no-such-token');
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toMatch(/^shipping-sandbox deliveries list: the sandbox answered 401: /);
    const other = await run('list', '--url', sandbox.url, '--token', A, '--client', 'list-1');
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/header\.x-sandbox-client: .*\(--client sets it\)/);
  });

  it('exits 2 when the sandbox cannot be reached', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const { code, stderr } = await run('list', '--url', `http://127.0.0.1:${port}`, '--token', A);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^shipping-sandbox deliveries list: fetch failed \(.*ECONNREFUSED/);
  });

  const flags = (...more: string[]) => ['--url', 'http://127.0.0.1:9', '--token', A, ...more];
  it.each([
    [['--token', A], /--url/],
    [['--url', 'ftp://x', '--token', A], /--url.*http/],
    [flags('--status', 'lost'), /--status.*lost.*pending, queued, delivered, failed, paused/],
    [flags('--event', 'awb.made'), /--event.*awb\.made.*awb\.generated, awb\.failed, order\.cancelled, ping/],
    [flags('--order-no', '12a'), /--order-no.*digits/],
    [flags('--endpoint', 'my hooks'), /--endpoint.*default, an endpoint id ep_\.\.\., or a listener's name/],
    [flags('--limit', '0'), /--limit.*1 to 1000/],
    [flags('--limit', '1001'), /--limit.*1 to 1000/],
    [flags('--limit', 'all'), /--limit.*1 to 1000/],
    [['--url', 'http://127.0.0.1:9', '--token', ''], /'--token <token>' argument '' is invalid\. must not be empty/],
    [flags('--client', ''), /'--client <id>' argument '' is invalid\. must not be empty/],
    [flags('--timeout', '0'), /'--timeout <duration>' argument '0' is invalid\. must be a duration above 0/],
    [flags('--timeout', 'soon'), /'--timeout <duration>' argument 'soon' is invalid\. must be a duration above 0/],
    [flags('--timeout', '5'), /'--timeout <duration>' argument '5' is invalid\. has no unit/],
  ])('exits 2 naming the flag for %j', async (argv, message) => {
    const { code, stdout, stderr } = await run('list', ...argv);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(message);
  });

  it('exits 2 within --timeout saying nothing answered, when what listens at --url takes the connection and never answers', async () => {
    const silent = await heldServer();
    try {
      const started = performance.now();
      const { code, stdout, stderr } = await run('list', '--url', silent.url, '--token', A, '--timeout', '200ms');
      expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `shipping-sandbox deliveries list: no answer from ${silent.url} within 200ms\n` });
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      await silent.close();
    }
  });

  it('gives --timeout to the whole walk over the pages, not to each page', async () => {
    // Each page of one delivery comes 150 ms after its request: each in time for 400ms, the three of --limit 3 not.
    const slowPages = await heldServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('cursor') ?? 0);
      const delivery = { id: `msg_${page}`, endpoint_id: 'default', event: 'awb.generated', order_no: '512345678901', status: 'delivered', created_at: '2026-05-01T10:00:00.000Z', last_error: null, attempts: [] };
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ total: 3, next_cursor: String(page + 1), deliveries: [delivery] }));
      }, 150);
    });
    try {
      const cut = await run('list', '--url', slowPages.url, '--token', A, '--limit', '3', '--timeout', '400ms');
      expect(cut).toEqual({ code: 2, stdout: '', stderr: `shipping-sandbox deliveries list: no answer from ${slowPages.url} within 400ms\n` });
      // Cut while walking: past the first page (a timeout per page would never have cut it), by the third at most (on a
      // busy machine the CLI's start may leave time for only two).
      expect(slowPages.requests.length).toBeGreaterThanOrEqual(2);
      expect(slowPages.requests.length).toBeLessThanOrEqual(3);
      const whole = await run('list', '--url', slowPages.url, '--token', A, '--limit', '3', '--timeout', '5s');
      expect({ code: whole.code, stderr: whole.stderr }).toEqual({ code: 0, stderr: '' });
      expect(cells(whole.stdout).slice(1).map((row) => row[0])).toEqual(['msg_0', 'msg_1', 'msg_2']);
    } finally {
      await slowPages.close();
    }
  });

  it("names a listener's endpoint listener:NAME in the table, and takes the name for --endpoint, bare or so", async () => {
    const all = cells((await run('list', '--url', sandbox.url, '--token', C)).stdout).slice(1);
    expect(all.map((row) => row[4]).sort()).toEqual(['default', 'listener:laptop']);
    for (const name of ['laptop', 'listener:laptop', laptop.ready.endpoint_id]) {
      const { code, stdout, stderr } = await run('list', '--url', sandbox.url, '--token', C, '--endpoint', name);
      expect({ code, stderr }, name).toEqual({ code: 0, stderr: '' });
      expect(cells(stdout).slice(1).map((row) => [row[4], row[5]]), name).toEqual([['listener:laptop', 'delivered']]);
    }
    const json = JSON.parse((await run('list', '--url', sandbox.url, '--token', C, '--endpoint', 'laptop', '--json')).stdout) as ListedDelivery[];
    expect(json.map((d) => d.endpoint_id)).toEqual([laptop.ready.endpoint_id]);
  });

  it('exits 1 naming the listeners there are, for a listener name no endpoint of the client forwards to', async () => {
    expect(await run('list', '--url', sandbox.url, '--token', C, '--endpoint', 'desk')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'shipping-sandbox deliveries list: no endpoint of this client forwards to a listener named desk (its listeners: laptop)\n',
    });
    expect((await run('list', '--url', sandbox.url, '--token', A, '--endpoint', 'laptop')).stderr).toBe('shipping-sandbox deliveries list: no endpoint of this client forwards to a listener named laptop (it has none)\n');
    // A listener named like an endpoint id is found, and named, with its prefix.
    const named = await TestListener.open(sandbox.url, { token: C, name: 'default', forwardTo: `${receiver.url}/default` });
    if (isRefused(named)) throw new Error(`listen refused: ${JSON.stringify(named)}`);
    try {
      expect((await run('list', '--url', sandbox.url, '--token', C, '--endpoint', 'desk')).stderr).toMatch(/\(its listeners: (laptop, listener:default|listener:default, laptop)\)\n$/);
      expect(await run('list', '--url', sandbox.url, '--token', C, '--endpoint', 'listener:default')).toMatchObject({ code: 0, stdout: 'no webhook deliveries match --endpoint listener:default\n' });
    } finally {
      named.ws.close();
    }
  });

  it('names both subcommands in its usage and for an unknown one', async () => {
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/shipping-sandbox deliveries list --url <url>[\s\S]*shipping-sandbox deliveries recover --since <time>/);
    const unknown = await run('show');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'show'.*\n {2}shipping-sandbox deliveries list .*\n {2}shipping-sandbox deliveries recover /);
    expect(await run('list', '--help')).toMatchObject({ code: 0, stdout: expect.stringMatching(/--status <status>[\s\S]*--order-no <order_no>[\s\S]*--limit <n>[\s\S]*--timeout <duration>[\s\S]*\(default: 30s\)[\s\S]*--json/) });
  });
});

describe('deliveryTable', () => {
  const delivery = (over: Partial<ListedDelivery>): ListedDelivery => ({ id: 'msg_1', endpoint_id: 'default', event: 'awb.generated', order_no: '512345678901', status: 'pending', created_at: '2026-05-01T10:00:00.000Z', last_error: null, attempts: [], ...over });

  it.each([
    ['the HTTP status of the last attempt', { attempts: [{ status_code: 503, error: null }, { status_code: 410, error: null }] }, '410'],
    ['why the last attempt had no answer', { attempts: [{ status_code: null, error: 'timed out after 10000 ms' }] }, 'timed out after 10000 ms'],
    ['a line break of an error as a space', { attempts: [{ status_code: null, error: 'ECONNRESET:\nsocket hang up' }] }, 'ECONNRESET: socket hang up'],
    ['why a delivery with no attempt waits', { status: 'paused', last_error: 'no webhook URL set' }, '- (no webhook URL set)'],
    ['a dash for a delivery not yet attempted', {}, '-'],
    ['a long error cut at 100 characters (--json has it whole)', { attempts: [{ status_code: null, error: `listener: ${'x'.repeat(500)}` }] }, `listener: ${'x'.repeat(89)}…`],
    ['a long error cut between characters as they show, not within one', { attempts: [{ status_code: null, error: '🇮🇩'.repeat(150) }] }, `${'🇮🇩'.repeat(99)}…`],
    ["the message's own last attempt, not the forged copy its chaos sent after it (rightly refused)", { status: 'delivered', attempts: [{ status_code: 200, error: null, chaos: null }, { status_code: 400, error: null, chaos: 'bad_signature' }] }, '200'],
  ])('shows %s in LAST ATTEMPT', (_, over, shown) => {
    expect(deliveryTable([delivery(over)])[1]!.split(/ {2,}/).at(-1)).toBe(shown);
  });

  it("names the endpoint of a removed listener as its attempts went, listener:NAME, beside its id, and another by its id", () => {
    const ended = delivery({ endpoint_id: 'ep_9f2', status: 'delivered', attempts: [{ status_code: 200, error: null, url: 'listener:laptop' }] });
    const unattempted = delivery({ endpoint_id: 'ep_7c1', status: 'failed', attempts: [] });
    const sent = delivery({ endpoint_id: 'ep_5d0', attempts: [{ status_code: 200, error: null, url: 'https://partner.test/hooks' }] });
    expect(deliveryTable([ended, unattempted, sent]).slice(1).map((row) => row.split(/ {2,}/)[4])).toEqual(['listener:laptop (ep_9f2)', 'ep_7c1', 'ep_5d0']);
  });

  it('shows every endpoint by its id alone when the list of endpoints could not be read (null), claiming nothing of its listener', () => {
    const ended = delivery({ endpoint_id: 'ep_9f2', status: 'delivered', attempts: [{ status_code: 200, error: null, url: 'listener:laptop' }] });
    expect(deliveryTable([ended, delivery({})], null).slice(1).map((row) => row.split(/ {2,}/)[4])).toEqual(['ep_9f2', 'default']);
  });

  it('shows a ping, which has no order, with a dash for ORDER_NO', () => {
    expect(deliveryTable([delivery({ event: 'ping', order_no: null })])[1]!.split(/ {2,}/)[3]).toBe('-');
  });
});
