import { describe, expect, it } from 'vitest';
import { applyReportChange, emptyReport, MARKS_KEPT, type ReportMark } from '../../src/records/index.js';
import { MemoryReports } from '../../src/store/embedded/reports.js';

const mark = (wall: number, detail: ReportMark['detail'] = {}): ReportMark => ({ at: wall, wall, detail });
/** A create that met a 503 and waits for its retry, then MARKS_KEPT + 100 marks of 404s read since. */
const waitingThenFlood = () => ({
  'retry:createOrder:aaaa': mark(1, { kind: '503-retried', fingerprint: 'aaaa' }),
  'retry:createOrder:heard': mark(2, { kind: 'timeout', fingerprint: 'bbbb', heard: 1 }),
  ...Object.fromEntries(Array.from({ length: MARKS_KEPT + 100 }, (_, n) => [`404:AWB${n}`, mark(10 + n)])),
});

describe("a client's marks beyond MARKS_KEPT", () => {
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
