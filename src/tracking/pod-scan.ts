import type { Fixtures } from '../fixtures/index.js';
import { isPlayedStep } from '../records/index.js';
import type { OrderRepository } from '../store/index.js';
import { magicScenario } from './view.js';

/**
 * Whether an AWB's tracking has a POD scan, so that its photo exists: a magic AWB of
 * a scenario with one, or an order of any client whose history holds one. POD photos
 * need no token, so this looks the AWB up across clients (one index lookup).
 *
 * @example await hasPodScan(fixtures, storage.orders, 'JN0000000001') // false until delivered
 */
export async function hasPodScan(fixtures: Fixtures, orders: Pick<OrderRepository, 'byAwb'>, awb: string): Promise<boolean> {
  const magic = magicScenario(fixtures, awb);
  if (magic) return magic.steps.some((step) => !!step.pod);
  const order = await orders.byAwb(awb);
  if (!order) return false;
  const scenario = fixtures.scenarios.get(order.scenario);
  return order.history.some((entry) => (isPlayedStep(entry) ? !!scenario?.steps[entry.step]?.pod : entry.pod_photo !== null));
}
