import { clientIdOf } from '../src/clients/registry.js';
import type { Order } from '../src/records/order.js';
import { emptyData } from '../src/store/embedded/file/schema.js';
import { FILE_FORMATS } from '../src/store/embedded/order-file-format.js';
import { OrderPacker } from '../src/store/embedded/order-packer.js';
import { SnapshotFile } from '../src/store/embedded/file/snapshot-file.js';
import { deliveredOrder } from '../test/support/delivered-order.js';

export const BENCH_TOKEN = 'bench-token';

/**
 * Writes a data file holding `count` delivered orders of the bench client (each with
 * its full tracking history), as the sandbox's own checkpoint writes them (packed as
 * the store keeps them, in its file format), and returns the AWB of one of them.
 */
export async function prefill(path: string, count: number): Promise<string> {
  const template = await deliveredOrder(BENCH_TOKEN);
  const data = emptyData();
  (data.meta as Record<string, unknown>).jobs_migrated = 1;
  const orders = data.orders as Record<string, unknown>;
  const packer = new OrderPacker();
  for (let i = 0; i < count; i += 1) {
    const orderNo = `9${String(i).padStart(11, '0')}`;
    const order: Order = { ...structuredClone(template), order_no: orderNo, awb: `BENCH${String(i).padStart(9, '0')}`, client_id: clientIdOf(BENCH_TOKEN) };
    orders[orderNo] = packer.pack(order);
  }
  (data.meta as Record<string, unknown>).seed = 'bench';
  await new SnapshotFile(path, undefined, undefined, FILE_FORMATS).write(data);
  return 'BENCH000000000';
}
