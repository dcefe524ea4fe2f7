import { describe, expect, it } from 'vitest';
import { applyReportChange, emptyReport, MARKS_KEPT, marksBeyond, RUN_MARK_PREFIXES, RUN_MARKS, SEEN_ID_ACKNOWLEDGED, SEEN_ID_REFUSED, type ReportMark } from '../../src/records/index.js';
import { MemoryReports } from '../../src/store/embedded/reports.js';
import { BatchView } from '../../src/report/batch-view.js';

const mark = (wall: number, detail: ReportMark['detail'] = {}): ReportMark => ({ at: wall, wall, detail });
/** Every kind of the run's marks: its keys, and its receivers' marks (the default endpoint's and another's). */
const RUN_MARK_KEYS = [...RUN_MARKS, ...RUN_MARK_PREFIXES.map((prefix) => `${prefix}default`), `${SEEN_ID_REFUSED}ep_2`];
/** A create that met a 503 and waits for its retry, then MARKS_KEPT + 100 marks of 404s read since. */
const waitingThenFlood = () => ({
  'retry:createOrder:aaaa': mark(1, { kind: '503-retried', fingerprint: 'aaaa' }),
  'retry:createOrder:heard': mark(2, { kind: 'timeout', fingerprint: 'bbbb', heard: 1 }),
  ...Object.fromEntries(Array.from({ length: MARKS_KEPT + 100 }, (_, n) => [`404:AWB${n}`, mark(10 + n)])),
});

describe("a client's marks beyond MARKS_KEPT", () => {
  /** The marks each path that bounds them keeps of `flood`: a change of the state, the embedded store, a batch's view. */
  async function keptOnEveryPath(flood: Record<string, ReportMark>): Promise<Array<Record<string, ReportMark>>> {
    const reports = new MemoryReports(10);
    await reports.change('acme', { marks: flood });
    const view = new BatchView(emptyReport('acme'));
    view.marked(flood);
    return [applyReportChange(emptyReport('acme'), { marks: flood }, 10).marks, (await reports.get('acme')).marks, view.current.marks];
  }

  it.each(RUN_MARK_KEYS)("keeps the run's mark %s however many marks come after: it holds for the run", async (key) => {
    const flood = { [key]: mark(0, { delivery: 'msg_1' }), ...Object.fromEntries(Array.from({ length: MARKS_KEPT + 100 }, (_, n) => [`404:AWB${n}`, mark(10 + n)])) };
    for (const marks of await keptOnEveryPath(flood)) expect(marks[key]).toBeDefined();
  });

  it.each(RUN_MARK_KEYS)("keeps the run's mark %s over MARKS_KEPT + 100 requests waiting for their retry, set after it", async (key) => {
    const flood = { [key]: mark(0), ...Object.fromEntries(Array.from({ length: MARKS_KEPT + 100 }, (_, n) => [`retry:createOrder:${n}`, mark(10 + n, { kind: '503-retried' })])) };
    for (const marks of await keptOnEveryPath(flood)) {
      expect(marks[key]).toBeDefined();
      expect(marks['retry:createOrder:0']).toBeUndefined(); // the oldest waiting retry went first
    }
  });

  it('holds the run for each receiver refusing or acknowledging a seen webhook-id, a create waiting for its retry (compared as the provider reads it), and a create carried out that the client gave up on', () => {
    expect(RUN_MARKS).toEqual(['same:createOrder', 'content:createOrder']);
    expect(RUN_MARK_PREFIXES).toEqual([SEEN_ID_REFUSED, SEEN_ID_ACKNOWLEDGED]);
    expect(RUN_MARK_PREFIXES.map((prefix) => `${prefix}ep_2`)).toEqual(['webhook:seen-id-refused:ep_2', 'webhook:seen-id-acknowledged:ep_2']);
  });

  it('drops the oldest others first and keeps a request waiting for its retry (it counts as missed), on both paths that bound them', async () => {
    const state = applyReportChange(emptyReport('acme'), { marks: waitingThenFlood() }, 10);
    expect(Object.keys(state.marks)).toHaveLength(MARKS_KEPT);
    expect(state.marks['retry:createOrder:aaaa']).toBeDefined();
    expect(state.marks['retry:createOrder:heard']).toBeUndefined(); // heard of: no longer waiting
    expect(state.marks['404:AWB0']).toBeUndefined();
    expect(state.marks[`404:AWB${MARKS_KEPT + 99}`]).toBeDefined();

    const reports = new MemoryReports(10);
    await reports.change('acme', { marks: waitingThenFlood() });
    const kept = await reports.get('acme');
    expect(Object.keys(kept.marks)).toHaveLength(MARKS_KEPT);
    expect(kept.marks['retry:createOrder:aaaa']).toBeDefined();
  });
});

/** The marks after a change as the rules say, written apart from the code under test: a copy, each key removed and set again last, then marksBeyond's drops. */
function reference(marks: Readonly<Record<string, ReportMark>>, change: Record<string, ReportMark | null>): Record<string, ReportMark> {
  const next = { ...marks };
  for (const [key, mark] of Object.entries(change)) {
    delete next[key];
    if (mark) next[key] = mark;
  }
  for (const key of marksBeyond(Object.keys(next), next)) delete next[key];
  return next;
}

describe("a batch's observations judged one after another (BatchView)", () => {
  /** Random changes of marks: sets of old and new keys, removals, waiting and heard retries. */
  function randomChanges(seed: number, n: number): Array<Record<string, ReportMark | null>> {
    let x = seed;
    const next = (m: number) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x % m;
    };
    return Array.from({ length: n }, (_, i) => {
      const change: Record<string, ReportMark | null> = {};
      for (let k = next(4); k >= 0; k -= 1) {
        const kind = next(10);
        const key = kind < 2 ? `retry:createOrder:${next(40)}` : `404:AWB${next(MARKS_KEPT + 200)}`;
        change[key] = next(6) === 0 ? null : mark(i, kind === 0 ? { heard: 1 } : {});
      }
      return change;
    });
  }

  it('sees, before each observation, the marks the rules keep after those before it, and never changes the view it was given', () => {
    for (const seed of [1, 2, 3]) {
      const start = applyReportChange(emptyReport('acme'), { marks: waitingThenFlood() }, 10);
      const given = structuredClone(start.marks);
      const view = new BatchView(start);
      let expected = start.marks;
      for (const change of randomChanges(seed, 400)) {
        expect(Object.entries(view.current.marks)).toEqual(Object.entries(expected)); // same marks, same order (oldest first)
        view.marked(change);
        expected = reference(expected, change);
      }
      expect(Object.entries(view.current.marks)).toEqual(Object.entries(expected));
      expect(start.marks).toEqual(given);
    }
  });

  it('hands out the view it was given, uncopied, to a batch whose observations set no marks before the last', () => {
    const start = applyReportChange(emptyReport('acme'), { marks: waitingThenFlood() }, 10);
    const view = new BatchView(start);
    expect(view.current).toBe(start);
    view.marked({});
    expect(view.current).toBe(start);
    view.marked({ '404:NEW': mark(99) });
    expect(view.current).not.toBe(start);
    expect(view.current.marks['404:NEW']).toEqual(mark(99));
  });
});
