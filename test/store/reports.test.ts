import { describe, expect, it } from 'vitest';
import { applyReportChange, emptyReport, MARKS_KEPT, type ReportChange, type ReportState } from '../../src/records/report.js';
import { MemoryReports } from '../../src/store/embedded/reports.js';

/** A plain copy of what a view shows, to compare with `applyReportChange`'s state. */
const plain = (view: Awaited<ReturnType<MemoryReports['get']>>): ReportState => ({ client_id: view.client_id, run: view.run, counts: { ...view.counts }, marks: { ...view.marks }, checks: [...view.checks], events: [...view.events], missed: [...view.missed] });

describe('the embedded readiness reports', () => {
  it('keep, change by change, what applyReportChange keeps: counts, marks newest last and bounded, events bounded, checks replaced', async () => {
    const size = 7;
    const reports = new MemoryReports(size);
    let expected = emptyReport('a');
    let seed = 1;
    const random = (n: number): number => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    for (let step = 0; step < 3000; step++) {
      const key = `m${random(MARKS_KEPT * 4)}`;
      const change: ReportChange = {
        counts: { [`item${random(4)}:handled`]: 1 + random(2) },
        marks: { [key]: random(10) === 0 ? null : { at: step, wall: step, detail: { step } } },
        events: Array.from({ length: random(3) }, (_, i) => ({ at: step, item: `x${random(3)}`, outcome: random(4) === 0 ? ('missed' as const) : ('exercised' as const), note: `${step}.${i}` })),
        ...(random(50) === 0 ? { checks: [{ id: 'valid', status: 'passed' as const, expected: '2xx', got: String(step), at: step }] } : {}),
      };
      expected = applyReportChange(expected, structuredClone(change), size);
      await reports.change('a', change);
    }
    const kept = plain(await reports.get('a'));
    expect(kept).toEqual(expected);
    expect(Object.keys(kept.marks)).toEqual(Object.keys(expected.marks));
    expect(Object.keys(kept.marks)).toHaveLength(MARKS_KEPT);
    // Each item's last three missed events, beyond the seven of the log.
    expect(kept.missed.length).toBeGreaterThan(0);
    for (const item of ['x0', 'x1', 'x2']) expect([...kept.missed, ...kept.events].filter((e) => e.item === item && e.outcome === 'missed').length).toBe(3);
  });

  it('keep each item’s last three missed events once the log has moved on, and no more', async () => {
    const reports = new MemoryReports(5);
    const event = (item: string, outcome: 'missed' | 'exercised', note: string) => ({ at: 0, item, outcome, note });
    await reports.change('a', { events: ['1', '2', '3', '4'].map((n) => event('fault.timeout', 'missed', n)) });
    await reports.change('a', { events: [event('error.create-400', 'missed', 'a'), ...Array.from({ length: 10 }, (_, n) => event('op.tracking', 'exercised', `t${n}`))] });
    expect((await reports.get('a')).missed.map((e) => e.note)).toEqual(['2', '3', '4', 'a']);
    await reports.change('a', { events: [event('fault.timeout', 'missed', '5')] });
    expect((await reports.get('a')).missed.map((e) => e.note)).toEqual(['3', '4', 'a']);
  });

  it('hand out the report itself, not a copy per read', async () => {
    const reports = new MemoryReports(10);
    await reports.change('a', { counts: { 'op.tracking:exercised': 1 } });
    expect(await reports.get('a')).toBe(await reports.get('a'));
  });
});
