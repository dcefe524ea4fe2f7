import { describe, expect, it } from 'vitest';
import { gradeReport } from '../../src/report/grade.js';
import type { CatalogueItem } from '../../src/report/catalogue.js';
import type { ReportView } from '../../src/records/index.js';

const item: CatalogueItem = {
  id: 'webhook.bad-signature',
  title: 'A webhook with a bad signature is refused',
  graded: true,
  sandbox_choice: true,
  source: 'provider-interface §4',
  exercised: 'A forged copy of an attempt was sent.',
  handled: 'It was answered 4xx (refused), not 2xx.',
};
const view = (counts: Record<string, number>): ReportView => ({ client_id: 'a', run: null, counts, marks: {}, checks: [], events: [], missed: [] });
const detail = (counts: Record<string, number>) => gradeReport([item], view(counts), 0, []).items[0]!.detail;

describe("an item's detail", () => {
  it('says what was wanted when an exercise was neither handled nor missed (a 500 to a forged copy)', () => {
    expect(detail({ 'webhook.bad-signature:exercised': 1 })).toBe('Exercised 1 time; the handling is not seen yet. Handled when: It was answered 4xx (refused), not 2xx.');
  });

  it('says what was wanted after a miss, and counts a handled exercise', () => {
    expect(detail({ 'webhook.bad-signature:exercised': 2, 'webhook.bad-signature:missed': 1 })).toMatch(/^Missed 1 of 2 times\. Handled when: It was answered 4xx/);
    expect(detail({ 'webhook.bad-signature:exercised': 1, 'webhook.bad-signature:handled': 1 })).toBe('Handled (1 of 1).');
    expect(detail({})).toBe('Not exercised yet. Exercised when: A forged copy of an attempt was sent.');
  });

  it('never shows more handled than exercised (two attempts of one delivery in flight at once, each its first acknowledgement)', () => {
    expect(detail({ 'webhook.bad-signature:exercised': 1, 'webhook.bad-signature:handled': 2 })).toBe('Handled (1 of 1).');
    expect(gradeReport([item], view({ 'webhook.bad-signature:exercised': 1, 'webhook.bad-signature:handled': 2 }), 0, []).items[0]).toMatchObject({ status: 'handled', handled: 1, exercised: 1 });
  });
});
