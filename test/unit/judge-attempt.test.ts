import { describe, expect, it } from 'vitest';
import type { Attempt, Delivery } from '../../src/records/index.js';
import { emptyReport, SEEN_ID_ACKNOWLEDGED, SEEN_ID_REFUSED, type ReportState } from '../../src/records/report.js';
import { judgeAttempt, RECEIVERS_KEPT } from '../../src/report/judge-attempt.js';

const attempt = (n: number, status: number, extra: Partial<Attempt> = {}): Attempt => ({
  n,
  at: 0,
  trigger: n === 1 ? 'initial' : 'schedule',
  chaos: null,
  url: 'http://127.0.0.1:9/hooks',
  webhook_timestamp: 0,
  status_code: status,
  duration_ms: 3,
  error: null,
  response_body: '',
  ...extra,
} as Attempt);

const delivery = (attempts: Attempt[]): Delivery => ({
  id: 'msg_1',
  seq: 1,
  client_id: 'acme',
  event: 'awb.generated',
  order_no: '1',
  body: '{}',
  chaos: ['bad_signature'],
  status: 'pending',
  created_at: 0,
  next_attempt_at: null,
  last_error: null,
  attempts,
});

const items = (d: Delivery, a: Attempt) => judgeAttempt(d, a, 0).change.events.map((e) => `${e.item}:${e.outcome}`);

describe('judging a webhook attempt', () => {
  it("does not take the refusal of a forged attempt (bad_signature) for the client's failure: its retry is no retry after a failure", () => {
    const refused = attempt(3, 401, { chaos: 'bad_signature' });
    expect(items(delivery([attempt(1, 204), attempt(2, 204, { chaos: 'duplicate' })]), refused)).toEqual(['webhook.bad-signature:exercised', 'webhook.bad-signature:handled']);
    expect(items(delivery([refused]), attempt(4, 200))).toEqual(['webhook.awb-acknowledged:exercised', 'webhook.awb-acknowledged:handled']);
  });

  it('counts deliveries, not attempts: exercised at the first attempt (a retry item at the first retry), handled at the first 2xx', () => {
    const failing = [attempt(1, 500), attempt(2, 500), attempt(3, 500)];
    expect(items(delivery([]), attempt(1, 500))).toEqual(['webhook.awb-acknowledged:exercised']);
    expect(items(delivery([attempt(1, 500)]), attempt(2, 500))).toEqual(['webhook.retry-acknowledged:exercised']);
    expect(items(delivery(failing.slice(0, 2)), attempt(3, 500))).toEqual([]);
    expect(items(delivery(failing), attempt(4, 200))).toEqual(['webhook.awb-acknowledged:handled', 'webhook.retry-acknowledged:handled']);
    // Acknowledged at its first retry: both items in one breath.
    expect(items(delivery([attempt(1, 500)]), attempt(2, 200))).toEqual(['webhook.awb-acknowledged:handled', 'webhook.retry-acknowledged:exercised', 'webhook.retry-acknowledged:handled']);
    // A redelivery of a delivery acknowledged already adds nothing, taken or not.
    for (const status of [200, 500]) expect(items(delivery([...failing, attempt(4, 200)]), attempt(5, status, { trigger: 'redeliver' }))).toEqual([]);
  });

  it("judges a delivery whole in a run started after its first attempts: those are not the run's", () => {
    const inRun = (run: number, attempts: Attempt[], next: Attempt) =>
      judgeAttempt(delivery(attempts), next, 0, emptyReport('acme', { name: 'build-7', started_at: run })).change.events.map((e) => `${e.item}:${e.outcome}`);
    // Failed twice before the run (at 1000 and 2000 on the client's clock), acknowledged in it.
    const before = [attempt(1, 500, { at: 1000 }), attempt(2, 500, { at: 2000 })];
    expect(inRun(2000, before, attempt(3, 200, { at: 7000 }))).toEqual(['webhook.awb-acknowledged:exercised', 'webhook.awb-acknowledged:handled', 'webhook.retry-acknowledged:exercised', 'webhook.retry-acknowledged:handled']);
    // Acknowledged before the run, redelivered and acknowledged in it: the run's own acknowledgement.
    expect(inRun(5000, [attempt(1, 200, { at: 1000 })], attempt(2, 200, { at: 9000, trigger: 'redeliver' }))).toEqual(['webhook.awb-acknowledged:exercised', 'webhook.awb-acknowledged:handled']);
    // Its first attempt in the run counted it already.
    expect(inRun(500, before, attempt(3, 200, { at: 7000 }))).toEqual(['webhook.awb-acknowledged:handled', 'webhook.retry-acknowledged:handled']);
  });

  it('does not take an attempt a listener never forwarded for an earlier one: it was never judged', () => {
    const unforwarded = attempt(1, 0, { url: 'listener:laptop', status_code: null, error: 'listener disconnected' });
    expect(items(delivery([unforwarded]), attempt(2, 200, { url: 'listener:laptop' }))).toEqual(['webhook.awb-acknowledged:exercised', 'webhook.awb-acknowledged:handled']);
    // A retry after the receiver's own failure, the unforwarded one between them counting for neither.
    const failedThenCut = [attempt(1, 500, { url: 'listener:laptop' }), { ...unforwarded, n: 2 }];
    expect(items(delivery(failedThenCut), attempt(3, 200, { url: 'listener:laptop' }))).toEqual(['webhook.awb-acknowledged:handled', 'webhook.retry-acknowledged:exercised', 'webhook.retry-acknowledged:handled']);
  });

  it('does not credit the refusal of the forged copy from a receiver not seen answering a webhook-id it has seen: it may refuse the id', () => {
    // A receiver that checks no signature but answers 409 to an id it has seen refuses the forged copy all the same.
    const judged = judgeAttempt(delivery([attempt(1, 204)]), attempt(2, 409, { chaos: 'bad_signature' }), 0, emptyReport('acme')).change.events;
    expect(judged.map((e) => `${e.item}:${e.outcome}`)).toEqual(['webhook.bad-signature:exercised']);
    expect(judged[0]!.note).toMatch(/no duplicate copy to this endpoint and URL was acknowledged before it in the run \(send bad_signature with duplicate: X-Sandbox-Webhook-Chaos: duplicate,bad_signature\): not told apart/);
    // A 429 or 408 is no refusal, but a busy receiver: not of the forged copy, nor of a duplicate copy (no mark that the
    // receiver refuses seen ids, and the forged copy after it refused is the signature's).
    for (const busy of [408, 429]) {
      expect(items(delivery([attempt(1, 204), attempt(2, 204, { chaos: 'duplicate' })]), attempt(3, busy, { chaos: 'bad_signature' }))).toEqual(['webhook.bad-signature:exercised']);
      expect(judgeAttempt({ ...delivery([attempt(1, 204)]), chaos: ['duplicate'] }, attempt(2, busy, { chaos: 'duplicate' }), 0).change.marks).toEqual({});
      const copies = delivery([attempt(1, 204), attempt(2, busy, { chaos: 'duplicate' }), attempt(3, 204, { chaos: 'duplicate' })]);
      expect(items(copies, attempt(4, 401, { chaos: 'bad_signature' }))).toEqual(['webhook.bad-signature:exercised', 'webhook.bad-signature:handled']);
    }
    // Taken with a 2xx, it is missed all the same.
    expect(items(delivery([attempt(1, 204)]), attempt(2, 200, { chaos: 'bad_signature' }))).toEqual(['webhook.bad-signature:exercised', 'webhook.bad-signature:missed']);
  });

  it('does not credit the refusal of the forged copy when its duplicate copy, under the same webhook-id, was refused too', () => {
    const acknowledged = attempt(1, 204);
    const forged = attempt(3, 409, { chaos: 'bad_signature' });
    expect(items(delivery([acknowledged, attempt(2, 409, { chaos: 'duplicate' })]), forged)).toEqual(['webhook.bad-signature:exercised']);
    expect(items(delivery([acknowledged, attempt(2, 204, { chaos: 'duplicate' })]), forged)).toEqual(['webhook.bad-signature:exercised', 'webhook.bad-signature:handled']);
    expect(items(delivery([acknowledged, attempt(2, 409, { chaos: 'duplicate' })]), attempt(3, 204, { chaos: 'bad_signature' }))).toEqual(['webhook.bad-signature:exercised', 'webhook.bad-signature:missed']);
  });

  it("judges each endpoint as a receiver of its own: another endpoint's answers to seen ids say nothing of this one's", () => {
    const acknowledged = attempt(1, 204);
    const copyTo = (endpoint: string | undefined, status: number) =>
      judgeAttempt({ ...delivery([acknowledged]), id: 'msg_0', chaos: ['duplicate'], ...(endpoint ? { endpoint_id: endpoint } : {}) }, attempt(2, status, { chaos: 'duplicate' }), 0).change.marks as ReportState['marks'];
    const forgedTo = (endpoint: string | undefined, status: number, marks: ReportState['marks']) =>
      judgeAttempt({ ...delivery([acknowledged]), ...(endpoint ? { endpoint_id: endpoint } : {}) }, attempt(2, status, { chaos: 'bad_signature' }), 0, { ...emptyReport('acme'), marks }).change.events.map((e) => e.outcome);
    // A receiver that checks signatures acknowledged a duplicate at the default endpoint; one that only refuses seen ids (409) is ep_2.
    expect(forgedTo('ep_2', 409, copyTo(undefined, 204))).toEqual(['exercised']);
    expect(forgedTo(undefined, 400, copyTo(undefined, 204))).toEqual(['exercised', 'handled']);
    // ep_2 refusing a duplicate copy does not hold against the default endpoint's refusal of a forged one.
    expect(forgedTo(undefined, 400, { ...copyTo(undefined, 204), ...copyTo('ep_2', 409) })).toEqual(['exercised', 'handled']);
    expect(forgedTo('ep_2', 400, { ...copyTo('ep_2', 204), ...copyTo(undefined, 409) })).toEqual(['exercised', 'handled']);
    expect(forgedTo('ep_2', 400, { ...copyTo('ep_2', 204), ...copyTo('ep_2', 409) })).toEqual(['exercised']);
  });

  it('judges another URL put on the same endpoint as another receiver: the careful one before it says nothing of it', () => {
    const careful = 'http://127.0.0.1:9/careful';
    const careless = 'http://127.0.0.1:9/careless';
    const acknowledgedAt = judgeAttempt({ ...delivery([attempt(1, 204, { url: careful })]), id: 'msg_0', chaos: ['duplicate'] }, attempt(2, 204, { chaos: 'duplicate', url: careful }), 0).change.marks as ReportState['marks'];
    const forged = (url: string, copies: Attempt[]) => judgeAttempt(delivery([attempt(1, 204, { url }), ...copies]), attempt(3, 409, { chaos: 'bad_signature', url }), 0, { ...emptyReport('acme'), marks: acknowledgedAt }).change.events.map((e) => e.outcome);
    expect(forged(careful, [])).toEqual(['exercised', 'handled']);
    expect(forged(careless, [])).toEqual(['exercised']);
    // This message's duplicate copy counts only from the URL the forged one went to.
    expect(forged(careless, [attempt(2, 204, { chaos: 'duplicate', url: careful })])).toEqual(['exercised']);
    expect(forged(careless, [attempt(2, 204, { chaos: 'duplicate', url: careless })])).toEqual(['exercised', 'handled']);
  });

  it(`remembers the ${RECEIVERS_KEPT} receivers seen last: a new one takes the place of the one seen least recently, both its marks together`, () => {
    const marks: ReportState['marks'] = {};
    // Receiver R refused a duplicate copy long ago and acknowledged one since; the others were seen between, out of insertion order.
    marks[`${SEEN_ID_REFUSED}ep_r@x`] = { at: 0, wall: 1, detail: {} };
    for (let n = 1; n < RECEIVERS_KEPT; n += 1) marks[`${SEEN_ID_REFUSED}ep_${n}@x`] = { at: 0, wall: n === 7 ? 2 : 100 + n, detail: {} };
    marks[`${SEEN_ID_ACKNOWLEDGED}ep_r@x`] = { at: 0, wall: 500, detail: {} };
    const copyTo = (endpoint: string, state: ReportState['marks']) =>
      judgeAttempt({ ...delivery([attempt(1, 204)]), endpoint_id: endpoint, chaos: ['duplicate'] }, attempt(2, 409, { chaos: 'duplicate' }), 0, { ...emptyReport('acme'), marks: state }).change.marks;
    const changed = copyTo('ep_new', marks);
    // ep_7 was seen least recently (R was seen at 500): it goes, and R keeps its refusal with its acknowledgement.
    expect(Object.entries(changed).filter(([, mark]) => mark === null).map(([key]) => key)).toEqual([`${SEEN_ID_REFUSED}ep_7@x`]);
    expect(Object.keys(changed).filter((key) => key.startsWith(`${SEEN_ID_REFUSED}ep_new@`))).toHaveLength(1);
    // Once R is the one seen least recently, both its marks go: its acknowledgement alone would credit its refusals of forged copies.
    const later = { ...marks, [`${SEEN_ID_ACKNOWLEDGED}ep_r@x`]: { at: 0, wall: 1, detail: {} } };
    expect(Object.entries(copyTo('ep_new', later)).filter(([, mark]) => mark === null).map(([key]) => key).sort()).toEqual([`${SEEN_ID_ACKNOWLEDGED}ep_r@x`, `${SEEN_ID_REFUSED}ep_r@x`]);
    // Below the bound, or a receiver already remembered (its other mark new): nothing dropped.
    const { [`${SEEN_ID_REFUSED}ep_7@x`]: _dropped, ...fewer } = marks;
    expect(Object.values(copyTo('ep_new', fewer)).filter((mark) => mark === null)).toEqual([]);
    const acknowledgedBy = (endpoint: string, state: ReportState['marks']) =>
      judgeAttempt({ ...delivery([attempt(1, 204)]), endpoint_id: endpoint, chaos: ['duplicate'] }, attempt(2, 204, { chaos: 'duplicate' }), 0, { ...emptyReport('acme'), marks: state }).change.marks;
    const receiverOf1 = Object.keys(copyTo('ep_1', {}))[0]!.slice(SEEN_ID_REFUSED.length);
    const full = { ...marks, [`${SEEN_ID_REFUSED}${receiverOf1}`]: { at: 0, wall: 50, detail: {} } };
    delete full[`${SEEN_ID_REFUSED}ep_1@x`];
    const again = acknowledgedBy('ep_1', full);
    expect(Object.values(again).filter((mark) => mark === null)).toEqual([]);
    // An acknowledgement is marked again each time: the receiver was seen now.
    const acknowledged = { ...full, ...again } as ReportState['marks'];
    expect(Object.keys(acknowledgedBy('ep_1', acknowledged))).toEqual([`${SEEN_ID_ACKNOWLEDGED}${receiverOf1}`]);
  });

  it('does not credit the refusal of a forged copy from a receiver seen refusing a duplicate copy of another delivery in the run', () => {
    const acknowledged = attempt(1, 204);
    const refusedCopy = judgeAttempt({ ...delivery([acknowledged]), id: 'msg_0', chaos: ['duplicate'] }, attempt(2, 409, { chaos: 'duplicate' }), 0);
    const state = { ...emptyReport('acme'), marks: refusedCopy.change.marks as ReportState['marks'] };
    const judged = judgeAttempt(delivery([acknowledged]), attempt(2, 409, { chaos: 'bad_signature' }), 0, state).change.events;
    expect(judged.map((e) => `${e.item}:${e.outcome}`)).toEqual(['webhook.bad-signature:exercised']);
    expect(judged[0]!.note).toMatch(/as a duplicate copy was \(this message’s, or one earlier in the run to this endpoint and URL\): not told apart/);
    // An acknowledged duplicate copy of another delivery marks the receiver as taking seen ids: the forged copy's refusal is the signature's.
    const acknowledgedCopy = judgeAttempt({ ...delivery([acknowledged]), id: 'msg_0', chaos: ['duplicate'] }, attempt(2, 204, { chaos: 'duplicate' }), 0);
    const clean = { ...emptyReport('acme'), marks: acknowledgedCopy.change.marks as ReportState['marks'] };
    expect(judgeAttempt(delivery([acknowledged]), attempt(2, 401, { chaos: 'bad_signature' }), 0, clean).change.events.map((e) => e.outcome)).toEqual(['exercised', 'handled']);
  });

  it('counts the acknowledged retry of an attempt the receiver failed', () => {
    expect(items(delivery([attempt(1, 500)]), attempt(2, 200))).toContain('webhook.retry-acknowledged:handled');
  });
});
