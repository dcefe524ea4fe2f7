import { afterEach, describe, expect, it } from 'vitest';
import type { ReportChange } from '../../src/records/index.js';
import { createApp } from '../../src/app/app.js';
import { noteApplied } from '../../src/faults/index.js';
import type { ServedRequest } from '../../src/requests/index.js';
import { createRequest } from '../support/orders.js';
import supertest from 'supertest';
import { testSandbox, TOKEN_A, type TestSandbox } from '../support/sandbox.js';
import { onPostgres } from '../support/store-kind.js';

const sandboxes: TestSandbox[] = [];
afterEach(async () => {
  for (const s of sandboxes.splice(0)) await s.close();
});

async function sandbox(options: Parameters<typeof testSandbox>[0] = {}): Promise<TestSandbox> {
  const s = await testSandbox(options);
  sandboxes.push(s);
  return s;
}

/** Every change to a report is stored `ms` later, as by a store that is slow (or a replica whose judging is behind). */
function slowReportChanges(s: TestSandbox, ms: number): void {
  const { reports } = s.services.storage;
  const change = reports.change.bind(reports);
  reports.change = async (clientId: string, next: ReportChange) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return change(clientId, next);
  };
}

async function item(s: TestSandbox, id: string): Promise<{ status: string; exercised: number }> {
  const report = (await s.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string; exercised: number }> };
  return report.items.find((i) => i.id === id)!;
}

/** The marks of client A's report as they are in the store now, without waiting for judging to settle. */
const storedMarks = async (s: TestSandbox): Promise<string[]> => Object.keys((await s.services.storage.reports.get('client-a', { events: false, counts: false })).marks);

const invalid = (): ReturnType<typeof createRequest> => {
  const body = createRequest(1);
  body.items[0]!.item_weight = 'heavy' as never;
  return body;
};

describe('what the client’s next request is judged against is stored before the answer that asks it', () => {
  it('a refused create, a 503 and a tracking 404 are marked in the store by the time the client has their answers', async () => {
    const s = await sandbox();
    slowReportChanges(s, 300);

    expect((await s.call('POST', '/v1/order', { body: invalid() })).status).toBe(400);
    expect(await storedMarks(s)).toEqual(expect.arrayContaining(['error:createOrder', expect.stringMatching(/^refused:createOrder:/)]));

    expect((await s.call('POST', '/v1/order', { body: createRequest(1), headers: { Prefer: 'code=503' } })).status).toBe(503);
    expect(await storedMarks(s)).toEqual(expect.arrayContaining([expect.stringMatching(/^retry:createOrder:/)]));

    expect((await s.call('GET', '/v1/order/tracking/JNE0000000000')).status).toBe(404);
    expect(await storedMarks(s)).toContain('404:JNE0000000000');
  });

  it('a tracking 404 answered after a latency rule’s wait is marked by the time the client has it', async () => {
    const s = await sandbox();
    await s.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder' }, action: { type: 'latency', ms: 50 }, times: 1 } });
    slowReportChanges(s, 300);
    expect((await s.call('GET', '/v1/order/tracking/JNE0000000003')).status).toBe(404);
    expect(await storedMarks(s)).toContain('404:JNE0000000003');
  });

  it('a held tracking read is marked for its retry before the client gives up on it', async () => {
    const s = await sandbox();
    await s.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'trackOrder' }, action: { type: 'hang' }, times: 1 } });
    slowReportChanges(s, 300);
    // Two seconds leave the mark's 300 ms and its statements room on a loaded machine; marked only as the client hangs up, it would come 300 ms after.
    await expect(supertest(s.app).get('/v1/order/tracking/JNE0000000000').set('Authorization', `Bearer ${TOKEN_A}`).timeout(2_000)).rejects.toThrow(/Timeout/);
    expect(await storedMarks(s)).toEqual([expect.stringMatching(/^retry:trackOrder:/)]);
  });

  it('a create answered 201 is judged once its connection closes, as before: its answer does not wait for the report', async () => {
    const s = await sandbox();
    slowReportChanges(s, 10_000);
    const started = Date.now();
    expect((await s.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a request is judged only against what requests that arrived before it left: a slow create is not the retry of a 503 answered while it ran', async () => {
    const s = await sandbox();
    await s.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'latency', ms: 400 }, times: 1 } });
    const body = createRequest(1);
    const slow = s.call('POST', '/v1/order', { body });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await s.call('POST', '/v1/order', { body, headers: { Prefer: 'code=503' } })).status).toBe(503);
    expect((await slow).status).toBe(201);

    const report = (await s.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string }> };
    expect(report.items.find((i) => i.id === 'fault.503-retried')).toMatchObject({ status: 'not_handled' });
  });

  it('a create its handler refuses under a reset rule with after_ms, while an answer waits, is answered 400 and nothing fails unhandled', async () => {
    const s = await sandbox();
    const unhandled: unknown[] = [];
    const note = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      // A module that holds every answer a while, as the report does on a slow store.
      const app = createApp(s.services, [...s.modules, { name: 'slow', observeAnswer: () => new Promise<void>((resolve) => setTimeout(resolve, 100)) }]);
      await s.call('POST', '/__sandbox/faults', { body: { match: { operation_id: 'createOrder' }, action: { type: 'reset', after_ms: 2_000 }, times: 1 } });
      const answer = await supertest(app).post('/v1/order').set('Authorization', `Bearer ${TOKEN_A}`).send(createRequest(1, { courier_code: 'zzz' }));
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([expect.objectContaining({ field: 'courier_code' })]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it('a request a hang rule refuses before holding it (a 429, too many held) is no timeout; one it holds is, judged as it is held', async () => {
    const s = await sandbox();
    const { observer } = s.modules.find((m) => m.name === 'report') as unknown as { observer: { answer(served: ServedRequest): Promise<void> | undefined; request(served: ServedRequest): void } };
    const tracking = s.services.specs.provider.operations.find((op) => op.operationId === 'trackOrder')!;
    const served = (awb: string, seq: number, status: number | null): ServedRequest => {
      const input = { operation: tracking, client: { id: 'client-a' }, role: 'partner', method: 'GET', path: `/v1/order/tracking/${awb}`, params: { order_no: awb }, query: {}, headers: {}, body: undefined, baseUrl: '' } as unknown as ServedRequest['input'];
      noteApplied(input, { id: 'fault_1', action: { type: 'hang' } });
      return { input, query: {}, seq, method: 'GET', arrivedAt: 0, violations: [], status, durationMs: 1, aborted: status === null };
    };
    const refused = served('JNE0000000001', 1, 429);
    expect(observer.answer(refused)).toBeUndefined();
    observer.request(refused);
    expect(await item(s, 'fault.timeout')).toMatchObject({ status: 'not_exercised' });

    const held = served('JNE0000000002', 2, null);
    const waiting = observer.answer(held);
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(await storedMarks(s)).toEqual([expect.stringMatching(/^retry:trackOrder:/)]);
    observer.request(held); // its close: judged already
    expect(await item(s, 'fault.timeout')).toMatchObject({ status: 'not_handled', exercised: 1 });
  });

  it.skipIf(!onPostgres)('two replicas: the same invalid create sent to one and then the other is missed, however far behind the first one’s judging is', async () => {
    const data = `answer-marks-${process.pid}-${Date.now()}`;
    const first = await sandbox({ data });
    const second = await sandbox({ data });
    slowReportChanges(first, 300);
    const body = invalid();

    expect((await first.call('POST', '/v1/order', { body })).status).toBe(400);
    expect((await second.call('POST', '/v1/order', { body })).status).toBe(400);
    expect((await first.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(201);

    await (first.modules.find((m) => m.name === 'report') as unknown as { observer: { settled(id: string): Promise<void> } }).observer.settled('client-a');
    const after = (await second.call('GET', '/__sandbox/report')).body as { items: Array<{ id: string; status: string; detail: string }> };
    expect(after.items.find((i) => i.id === 'error.create-400')).toMatchObject({ status: 'not_handled', detail: expect.stringMatching(/^Missed 1 of 2/) });
  });
});
