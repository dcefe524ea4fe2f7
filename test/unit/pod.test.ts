import { describe, expect, it } from 'vitest';
import { hasPodScan } from '../../src/tracking/pod-scan.js';
import { loadFixtures } from '../../src/fixtures/load.js';
import type { HistoryRecord, Order } from '../../src/records/order.js';
import type { Stored } from '../../src/records/index.js';

const fixtures = loadFixtures();
const POD_STEP = fixtures.scenarios.get('delivered')!.steps.findIndex((step) => !!step.pod);

/** An order repository that knows only `byAwb`: hasPodScan may look one AWB up, never list orders. */
function ordersWith(awb: string, history: HistoryRecord[]) {
  const looked: string[] = [];
  const order = { order_no: '512345678901', awb, scenario: 'delivered', history, version: 1 } as unknown as Stored<Order>;
  return { looked, repository: { byAwb: async (wanted: string) => (looked.push(wanted), wanted === awb ? order : undefined) } };
}

describe('hasPodScan', () => {
  it('is false for an AWB no order has, after one lookup of that AWB', async () => {
    const { looked, repository } = ordersWith('JN0000000001', []);
    expect(await hasPodScan(fixtures, repository, 'NOPE1')).toBe(false);
    expect(looked).toEqual(['NOPE1']);
  });

  it('is false before the POD step is played and true once it is', async () => {
    const early = ordersWith('JN0000000001', [{ step: 0, at: 1 }]);
    expect(await hasPodScan(fixtures, early.repository, 'JN0000000001')).toBe(false);
    const delivered = ordersWith('JN0000000001', [{ step: POD_STEP, at: 2 }, { step: 0, at: 1 }]);
    expect(await hasPodScan(fixtures, delivered.repository, 'JN0000000001')).toBe(true);
  });

  it('answers magic AWBs from their scenario without a lookup', async () => {
    const { looked, repository } = ordersWith('JN0000000001', []);
    expect(await hasPodScan(fixtures, repository, 'SBXDLV00000001')).toBe(true);
    expect(await hasPodScan(fixtures, repository, 'SBXSTK00000004')).toBe(false);
    expect(looked).toEqual([]);
  });
});
