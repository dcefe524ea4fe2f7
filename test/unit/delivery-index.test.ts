import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/records/index.js';
import { DeliveryIndex } from '../../src/store/embedded/indexes.js';

/** A delivery as the index reads it: its client, listing rank, order and status. */
const delivery = (id: string, seq: number, status: Delivery['status'], client_id = 'client-a'): Delivery =>
  ({ id, seq, client_id, created_at: 1_000 + seq, order_no: `O${seq}`, status }) as unknown as Delivery;

/** The client's paused delivery ids, newest first. */
function paused(index: DeliveryIndex, clientId = 'client-a'): string[] {
  const ids: string[] = [];
  index.paused.get(clientId)?.scanNewestFirst(undefined, (id) => (ids.push(id), true));
  return ids;
}

describe("the embedded store's index of paused deliveries", () => {
  it('holds each client’s paused deliveries only, as they are added, change status and go', () => {
    const index = new DeliveryIndex();
    index.add(delivery('d1', 1, 'delivered'));
    index.add(delivery('d2', 2, 'paused'));
    index.add(delivery('d3', 3, 'pending'));
    index.add(delivery('d4', 4, 'paused'));
    index.add(delivery('b1', 5, 'paused', 'client-b'));
    expect(paused(index)).toEqual(['d4', 'd2']);
    expect(paused(index, 'client-b')).toEqual(['b1']);
    // Resumed: no longer paused. Held again: paused again.
    index.update(delivery('d2', 2, 'paused'), delivery('d2', 2, 'pending'));
    index.update(delivery('d3', 3, 'pending'), delivery('d3', 3, 'paused'));
    // Still paused, another field changed: once, in place.
    index.update(delivery('d4', 4, 'paused'), delivery('d4', 4, 'paused'));
    expect(paused(index)).toEqual(['d4', 'd3']);
    index.remove(delivery('d4', 4, 'paused'));
    expect(paused(index)).toEqual(['d3']);
    expect(index.statusCounts.get('client-a')?.get('paused')).toBe(1);
  });
});
