import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ServedRequest } from '../../src/http/response-notes.js';
import type { AnsweredOrder } from '../../src/requests/served.js';
import { PENDING_PER_CLIENT, ReportObserver } from '../../src/report/observer.js';
import { applyReportChange, emptyReport, type ReportChange, type ReportState } from '../../src/records/report.js';
import type { Storage } from '../../src/store/port.js';
import { createRequest } from '../support/orders.js';
import { Unavailable } from '../../src/shared/index.js';
import { noteApplied } from '../../src/faults/index.js';

/**
 * A report store whose reads wait until `open()`: observations made meanwhile queue up,
 * as they do on a loaded replica whose store answers slowly.
 */
function slowReports() {
  let state: ReportState = emptyReport('acme');
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const calls = { get: 0, change: 0 };
  const reports = {
    size: 1000,
    async get() {
      calls.get += 1;
      await gate;
      return state;
    },
    async change(_clientId: string, change: ReportChange) {
      calls.change += 1;
      state = applyReportChange(state, change, 1000);
    },
  };
  return {
    storage: { reports } as unknown as Storage,
    calls,
    state: () => state,
    open: () => open(),
  };
}

let seq = 0;
function served(status: number, body: unknown): ServedRequest {
  seq += 1;
  return {
    query: {},
    input: {
      operation: { operationId: 'createOrder' },
      client: { id: 'acme' },
      method: 'POST',
      path: '/v1/order',
      params: {},
      query: {},
      headers: {},
      body,
      baseUrl: 'http://127.0.0.1',
    } as unknown as ServedRequest['input'],
    seq,
    method: 'POST',
    arrivedAt: 1_000 + seq,
    violations: [],
    status,
    durationMs: 1,
    aborted: false,
  };
}

/** A tracking read of `awb` answered with `status` from the client's order as `answered` shows it (null: no order of the client has that AWB). */
function tracked(awb: string, status = 200, answered: AnsweredOrder | null = { order_no: `ORD-${awb}`, version: 2, ended: true }): ServedRequest {
  const request = served(status, undefined);
  const path = `/v1/order/tracking/${awb}`;
  const input = { ...request.input, operation: { operationId: 'trackOrder' }, method: 'GET', path, params: { order_no: awb }, ...(answered ? { answeredOrder: answered } : {}) };
  return { ...request, method: 'GET', input: input as unknown as ServedRequest['input'] };
}

/**
 * Orders and deliveries whose reads are counted, with how many were in flight at once.
 * Every order is acme's with its AWB webhook acknowledged, but those `owners` and
 * `unacknowledged` name; the webhooks of `failing` AWBs' orders fail their first read.
 * A tracking read is judged by the order its answer showed: an order read counts as a
 * read judging should not have made.
 */
function countedReads(storage: Storage, { owners = {}, unacknowledged = [], failing = [] }: { owners?: Record<string, string>; unacknowledged?: string[]; failing?: string[] } = {}) {
  const reads = { orders: 0, deliveries: 0, inFlight: 0, mostInFlight: 0, listingsInFlight: 0, mostListingsInFlight: 0, listed: [] as string[] };
  const failed = new Set<string>();
  const answer = async <T>(counted: 'orders' | 'deliveries', value: () => T): Promise<T> => {
    reads[counted] += 1;
    reads.inFlight += 1;
    reads.mostInFlight = Math.max(reads.mostInFlight, reads.inFlight);
    if (counted === 'deliveries') reads.mostListingsInFlight = Math.max(reads.mostListingsInFlight, (reads.listingsInFlight += 1));
    await new Promise((resolve) => setTimeout(resolve, 1));
    reads.inFlight -= 1;
    if (counted === 'deliveries') reads.listingsInFlight -= 1;
    return value();
  };
  const orderOf = (awb: string) => ({ order_no: `ORD-${awb}`, awb, client_id: owners[awb] ?? 'acme', next_step: null, history: [{}], version: 2 });
  Object.assign(storage, {
    orders: { byAwb: (awb: string) => answer('orders', () => orderOf(awb)) },
    deliveries: {
      list: (_clientId: string, query: { order_no: string }) => {
        reads.listed.push(query.order_no);
        const awb = query.order_no.slice(4);
        return answer('deliveries', () => {
          if (failing.includes(awb) && !failed.has(awb)) throw (failed.add(awb), new Error('connection reset'));
          return { items: [{ status: unacknowledged.includes(awb) ? 'pending' : 'delivered' }], total: 1 };
        });
      },
    },
  });
  return reads;
}

describe('the readiness observer under load', () => {
  it('judges observations that queue up together: each sees the marks of those before it, all counted in one change', async () => {
    const store = slowReports();
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    const bad = createRequest(1);
    bad.items[0]!.item_weight = 'heavy' as never;
    // The first read is held: the next observations wait behind it and form one batch.
    observer.request(served(201, createRequest(1)));
    observer.request(served(400, bad));
    observer.request(served(400, bad)); // sent again unchanged: missed
    observer.request(served(201, createRequest(2))); // changed before sending again: handled
    for (let i = 0; i < 50; i += 1) observer.request(served(201, createRequest(1)));
    store.open();
    await observer.settled('acme');

    expect(store.state().counts).toMatchObject({
      'op.create-order:exercised': 52,
      'op.create-order:handled': 52,
      'error.create-400:exercised': 2,
      'error.create-400:missed': 1,
      'error.create-400:handled': 1,
      'create.multi-item:handled': 1,
    });
    // Only the refused body stays marked (and that the operation has refusals): sent again later, whatever came between, it is sent again unchanged.
    expect(Object.keys(store.state().marks)).toEqual([expect.stringMatching(/^refused:createOrder:/), 'refused:createOrder']);
    expect(store.state().events).toHaveLength(52 * 2 + 2 + 2 + 2);
    // The first observation alone, the 53 that queued behind it together: their marks stored first, then all their counts.
    expect(store.calls).toEqual({ get: 2, change: 3 });
  });

  it('judges what comes while a batch’s counts are stored together, with one read of the report, and lets an answer waiting for its marks cut that wait short', async () => {
    let state: ReportState = emptyReport('acme');
    const calls = { get: 0 };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Counts stored 400 ms after they are given, as PostgreSQL holds them for a batch interval (100 ms) and more under load.
    const reports = {
      size: 1000,
      async get() {
        calls.get += 1;
        return state;
      },
      async change(_clientId: string, change: ReportChange) {
        if (change.counts !== undefined || change.events !== undefined) await sleep(1_500);
        state = applyReportChange(state, change, 1000);
      },
    };
    const observer = new ReportObserver({ storage: { reports } as unknown as Storage, logger: pino({ level: 'silent' }), manualClock: false });
    observer.request(served(201, createRequest(1)));
    await sleep(20);
    for (let i = 0; i < 10; i += 1) {
      observer.request(served(201, createRequest(1)));
      await sleep(5);
    }
    const bad = createRequest(1);
    bad.items[0]!.item_weight = 'heavy' as never;
    const started = Date.now();
    await observer.answer(served(400, bad));
    // Well short of the counts' 1.5 s write it would wait for: only its own marks are written before the answer.
    expect(Date.now() - started).toBeLessThan(750);
    await observer.settled('acme');
    // The first alone; the ten and the refused create together.
    expect(calls.get).toBe(2);
    expect(state.counts).toMatchObject({ 'op.create-order:handled': 11, 'error.create-400:exercised': 1 });
  });

  it('judges a request once: one refused after the client gave up (its close judged it) is not judged again as it is answered', async () => {
    const store = slowReports();
    store.open();
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    const bad = createRequest(1);
    bad.items[0]!.item_weight = 'heavy' as never;
    const late = { ...served(400, bad), aborted: true };
    observer.request(late);
    expect(observer.answer(late)).toBeUndefined();
    await observer.settled('acme');
    expect(store.state().counts['error.create-400:exercised']).toBe(1);
  });

  it('judges a request against a mark another replica set, whatever that replica’s clock says: replicas’ clocks differ', async () => {
    const store = slowReports();
    store.open();
    // A refused create judged on another replica whose clock is 30 s ahead of this one's.
    await store.storage.reports.change('acme', { marks: { 'error:createOrder': { at: 0, wall: Date.now() + 30_000, origin: 'elsewhere:7', detail: { item: 'error.create-400', fingerprint: 'the refused body' } } } });
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    observer.request(served(201, createRequest(2)));
    await observer.settled('acme');
    expect(store.state().counts['error.create-400:handled']).toBe(1);
  });

  it('remembers at most 32 refused bodies of an operation, the newest: a fuzzer does not push out the marks of other items', async () => {
    const store = slowReports();
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    store.open();
    const bodies = Array.from({ length: 40 }, (_, n) => createRequest(1, { sender_name: `Bad ${n}` }));
    for (const body of bodies) observer.request(served(400, body));
    await observer.settled('acme');
    const refused = Object.keys(store.state().marks).filter((key) => key.startsWith('refused:createOrder:'));
    expect(refused).toHaveLength(32);
    // The newest is remembered: sent again unchanged right after, it is missed; the oldest is forgotten.
    observer.request(served(400, bodies[39]));
    observer.request(served(400, bodies[0]));
    await observer.settled('acme');
    expect(store.state().counts['error.create-400:missed']).toBe(1);
  });

  it('judges a batch of tracking reads with one read of each order’s webhooks and none of the order, which the answer showed', async () => {
    const store = slowReports();
    const reads = countedReads(store.storage);
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    observer.request(tracked('JNE0000000000')); // judged alone while the rest queue
    const awbs = ['JNE0000000001', 'JNE0000000002', 'JNE0000000003', 'JNE0000000004', 'JNE0000000005'];
    for (let i = 0; i < 50; i += 1) observer.request(tracked(awbs[i % awbs.length]!));
    store.open();
    await observer.settled('acme');

    // Every read judged as if each had read the store itself.
    expect(store.state().counts).toMatchObject({ 'op.tracking:handled': 51, 'journey.read-to-end:handled': 51, 'tracking.after-webhook:handled': 51 });
    // One webhook read per order and batch, one listing at a time; no order read.
    expect(reads).toMatchObject({ orders: 0, deliveries: 6, inFlight: 0, mostListingsInFlight: 1 });
  });

  it('judges each tracking read of a batch by its own order: another client’s AWB, a webhook not acknowledged yet', async () => {
    const store = slowReports();
    const reads = countedReads(store.storage, { owners: { JNE0000000003: 'other' }, unacknowledged: ['JNE0000000002'] });
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    observer.request(tracked('JNE0000000000'));
    // JNE0000000003 is another client's: the answer (a 404 there) found no order of acme's.
    for (const awb of ['JNE0000000001', 'JNE0000000002', 'JNE0000000003', 'JNE0000000001', 'JNE0000000002']) observer.request(awb === 'JNE0000000003' ? tracked(awb, 200, null) : tracked(awb));
    store.open();
    await observer.settled('acme');

    expect(store.state().counts).toMatchObject({ 'op.tracking:handled': 6, 'tracking.after-webhook:handled': 3, 'tracking.after-webhook:missed': 2 });
    // Another client's order: its webhooks are none of acme's business.
    expect(reads.listed).toEqual(['ORD-JNE0000000000', 'ORD-JNE0000000001', 'ORD-JNE0000000002']);
  });

  it("judges a read to the journey's end by the order as the answer showed it, not as it is when judged", async () => {
    const store = slowReports();
    countedReads(store.storage);
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    const answeredAt = (awb: string, version: number): ServedRequest => tracked(awb, 200, { order_no: `ORD-${awb}`, version, ended: version === 2 });
    // Answered from version 1 (a step before the last); the order reached its end (version 2) before judging.
    observer.request(answeredAt('JNE0000000001', 1));
    observer.request(answeredAt('JNE0000000002', 2));
    store.open();
    await observer.settled('acme');

    expect(store.state().counts).toMatchObject({ 'journey.read-to-end:exercised': 2, 'journey.read-to-end:handled': 1 });
  });

  it('loses only the observation whose read failed: the next that needs it reads again', async () => {
    const store = slowReports();
    const lines: string[] = [];
    const reads = countedReads(store.storage, { failing: ['JNE0000000001'] });
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'error' }, { write: (line: string) => void lines.push(line) }), manualClock: false });
    observer.request(tracked('JNE0000000000'));
    for (let i = 0; i < 10; i += 1) observer.request(tracked('JNE0000000001'));
    store.open();
    await observer.settled('acme');

    expect(store.state().counts['op.tracking:handled']).toBe(10);
    expect(lines.filter((line) => line.includes('readiness report observation failed'))).toHaveLength(1);
    expect(reads.deliveries).toBe(3);
    expect(reads.orders).toBe(0);
  });

  it('judges a batch the store refused again one by one: only the observation it cannot take is lost, and it is logged', async () => {
    const store = slowReports();
    const change = store.storage.reports.change.bind(store.storage.reports);
    // The store refuses any change holding the 400's answer (as a database may refuse one odd value).
    store.storage.reports.change = async (clientId, next) => {
      if (next.counts?.['operation:createOrder:400'] !== undefined) throw new Error('refused');
      return change(clientId, next);
    };
    const lines: string[] = [];
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'error' }, { write: (line: string) => void lines.push(line) }), manualClock: false });
    const bad = createRequest(1);
    bad.items[0]!.item_weight = 'heavy' as never;
    observer.request(served(201, createRequest(1))); // judged alone while the rest queue
    for (let i = 0; i < 10; i += 1) observer.request(served(201, createRequest(1)));
    observer.request(served(400, bad));
    for (let i = 0; i < 10; i += 1) observer.request(served(201, createRequest(1)));
    store.open();
    await observer.settled('acme');

    expect(store.state().counts['op.create-order:handled']).toBe(21);
    expect(store.state().counts['error.create-400:exercised']).toBeUndefined();
    expect(lines.join('')).toContain('readiness report observation failed');
  });

  it('logs observations lost to a store that is unavailable (a database away) as one warning a minute, without a stack, saying how many', async () => {
    const store = slowReports();
    store.storage.reports.change = async () => {
      throw new Unavailable('The store cannot save changes right now (ECONNREFUSED); nothing was saved. Retry shortly.');
    };
    const lines: string[] = [];
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }), manualClock: false });
    observer.request(served(201, createRequest(1))); // judged alone while the rest queue
    for (let i = 0; i < 20; i += 1) observer.request(served(201, createRequest(1)));
    store.open();
    await observer.settled('acme');

    const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: unknown; error?: string });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 40, msg: 'readiness report observation: 1 observation of client acme was not recorded (the report misses it), the store being unavailable', error: expect.stringContaining('ECONNREFUSED') });
    expect(logged[0]!.err).toBeUndefined();
  });

  it('bounds what waits for a store that is behind: past the bound a client’s observations are dropped, counted in one warning', async () => {
    const store = slowReports();
    const lines: string[] = [];
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }), manualClock: false });
    // The first is being judged (its read held), the rest of PENDING_PER_CLIENT wait behind it; the last 100 find no room.
    for (let i = 0; i < PENDING_PER_CLIENT + 100; i += 1) observer.request(served(201, createRequest(1)));
    store.open();
    await observer.settled('acme');

    expect(store.state().counts['op.create-order:handled']).toBe(PENDING_PER_CLIENT);
    const warnings = lines.map((line) => JSON.parse(line) as { msg: string; dropped?: number }).filter((line) => line.msg.includes('dropped'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.dropped).toBe(100);
    // Once the store caught up, the client's observations are judged again.
    observer.request(served(201, createRequest(1)));
    await observer.settled('acme');
    expect(store.state().counts['op.create-order:handled']).toBe(PENDING_PER_CLIENT + 1);
  });

  it('settles on what was observed before it was asked, while the client’s traffic goes on', async () => {
    const store = slowReports();
    const reports = store.storage.reports;
    const get = reports.get.bind(reports);
    // Each read takes 2 ms: observations made meanwhile keep the client's judging busy.
    reports.get = async (clientId, options) => (await new Promise((resolve) => setTimeout(resolve, 2)), get(clientId, options));
    store.open();
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    let going = true;
    const traffic = (async () => {
      while (going) {
        observer.request(served(201, createRequest(1)));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const asked = performance.now();
    const settled = await Promise.race([observer.settled('acme').then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 2_000))]);
    const waited = performance.now() - asked;
    going = false;
    await traffic;
    expect(settled).toBe(true);
    expect(waited).toBeLessThan(1_000);
    await observer.settled('acme');
  });
});

describe("a Retry-After's window as the client met it", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /**
   * A create answered 503 with `retryAfter` by a fault rule, judged as it is answered: its
   * answer waits for its marks, and the report's reads wait until `store.open()`.
   */
  function held503(retryAfter: string, body = createRequest(1)) {
    const store = slowReports();
    const observer = new ReportObserver({ storage: store.storage, logger: pino({ level: 'silent' }), manualClock: false });
    const refused = served(503, body);
    noteApplied(refused.input, { id: 'fault_1', action: { type: 'status', status: 503, headers: { 'Retry-After': retryAfter } } });
    const answered = observer.answer(refused);
    expect(answered).toBeDefined();
    return { store, observer, body, answered };
  }

  it('does not count a create that arrived while the 503 still waited for its marks (a worker pool’s, on its way) as hammering; one sent after the 503 went out is', async () => {
    const { store, observer, answered } = held503('30');
    await sleep(10);
    observer.request(served(201, createRequest(2)));
    store.open();
    await answered;
    await observer.settled('acme');
    expect(store.state().counts['fault.retry-after:missed']).toBeUndefined();

    // Sent once the 503 was out, well inside its 30 s.
    await sleep(10);
    observer.request(served(201, createRequest(3)));
    await observer.settled('acme');
    expect(store.state().counts['fault.retry-after:missed']).toBe(1);
    expect(store.state().events.find((event) => event.item === 'fault.retry-after')).toMatchObject({ note: expect.stringMatching(/^another request of the operation sent \d+ ms into a Retry-After of 30000 ms/) });
  });

  it('times the retry from when the 503 went out, not from when it arrived: an answer held for its marks longer than Retry-After does not make an early retry a wait', async () => {
    const { store, observer, body, answered } = held503('1');
    // The store is slow: the answer waits 1.2 s for its marks, longer than its Retry-After.
    await sleep(1_200);
    store.open();
    await answered;
    await sleep(50);
    observer.request(served(201, body));
    await observer.settled('acme');
    expect(store.state().counts).toMatchObject({ 'fault.503-retried:handled': 1, 'fault.retry-after:missed': 1 });
    expect(store.state().events.find((event) => event.item === 'fault.retry-after' && event.outcome === 'missed')).toMatchObject({ note: expect.stringMatching(/^retried after \d{2,3} ms \(Retry-After 1000 ms\)/) });
  });

  it("does not take the same create sent while the 503 still waited for its marks (a worker pool's duplicate) as its retry", async () => {
    const { store, observer, body, answered } = held503('30');
    await sleep(20);
    observer.request(served(201, body));
    store.open();
    await answered;
    await observer.settled('acme');
    expect(store.state().counts['fault.503-retried:handled']).toBeUndefined();
    expect(store.state().counts['fault.retry-after:missed']).toBeUndefined();
    // Nor did it close the 503's window: another create sent after the 503 went out, inside its 30 s, hammers it.
    await sleep(10);
    observer.request(served(201, createRequest(2)));
    await observer.settled('acme');
    expect(store.state().counts['fault.retry-after:missed']).toBe(1);
  });

  it('counts a Retry-After date from when the request arrived, where the date was read: a retry right after the date is a wait however long the answer was held', async () => {
    const date = (Math.floor(Date.now() / 1000) + 2) * 1000;
    const { store, observer, body, answered } = held503(new Date(date).toUTCString());
    await sleep(400);
    store.open();
    await answered;
    await sleep(date + 30 - Date.now());
    observer.request(served(201, body));
    await observer.settled('acme');
    expect(store.state().counts).toMatchObject({ 'fault.503-retried:handled': 1, 'fault.retry-after:handled': 1 });
  });
});
