import { isPlayedStep, type Order } from '../orders/types.js';
import type { Services } from '../services.js';
import { magicScenario } from '../tracking/view.js';

/**
 * Whether an AWB's tracking has a POD scan, so that its photo exists: a magic AWB of
 * a scenario with one, or an order of any client whose history holds one. POD photos
 * need no token, so this looks across clients; it scans the orders only for an AWB
 * that exists.
 */
export function hasPodScan({ fixtures, orders, store }: Services, awb: string): boolean {
  const magic = magicScenario(fixtures, awb);
  if (magic) return magic.steps.some((step) => !!step.pod);
  if (!orders.exists('awb', awb)) return false;
  const order = store.values<Order>('orders').find((o) => o.awb === awb);
  const scenario = order && fixtures.scenarios.get(order.scenario);
  return !!order?.history.some((entry) => (isPlayedStep(entry) ? !!scenario?.steps[entry.step]?.pod : entry.pod_photo !== null));
}
