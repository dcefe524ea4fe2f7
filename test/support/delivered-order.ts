import type { Order } from '../../src/records/order.js';
import { buildServices } from '../../src/app/sandbox.js';
import { createRequest } from './orders.js';

/**
 * An order of the client of `token` played to its end (delivered, full tracking
 * history), made by an in-memory sandbox on a manual clock started six days ago, so
 * that its journey ended before now: the template that the bench's big data files and
 * seeded databases copy.
 */
export async function deliveredOrder(token: string): Promise<Order> {
  const clockStart = String(Date.now() - 6 * 86_400_000);
  const services = await buildServices({ clock: 'manual', clockStart, seed: 'bench', awbDelay: '0', tokens: [token], data: ':memory:' });
  try {
    const client = services.registry.clients[0]!;
    const { order_numbers } = await services.orders.create(client, createRequest(1));
    await services.advanceClock(5 * 86_400_000);
    return structuredClone((await services.storage.orders.get(order_numbers[0]!))!) as Order;
  } finally {
    await services.scheduler.stop();
    await services.storage.close();
  }
}
