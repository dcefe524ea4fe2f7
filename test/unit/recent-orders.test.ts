import { describe, expect, it } from 'vitest';
import type { Order } from '../../src/records/index.js';
import { RecentOrders } from '../../src/store/postgres/recent-orders.js';

const order = (status: string) => ({ order_no: '1', status }) as unknown as Order;

describe("a replica's recent orders", () => {
  it('holds nothing of an order it never read, and then the row version it read', () => {
    const recent = new RecentOrders();
    expect(recent.held('c', 'AWB1')).toMatchObject({ version: 0, stamp: '' });
    expect(recent.found('c', 'AWB1', { data: order('new'), version: 1, stamp: '700@1764800000.1' })).toEqual({ data: order('new'), version: 1 });
    expect(recent.held('c', 'AWB1')).toMatchObject({ version: 1, stamp: '700@1764800000.1' });
    // Another client's order of the same AWB is another order.
    expect(recent.held('d', 'AWB1')).toMatchObject({ version: 0, stamp: '' });
  });

  it('serves the order it holds when the database says the row is that version, and the new one when it changed', () => {
    const recent = new RecentOrders();
    recent.found('c', 'AWB1', { data: order('new'), version: 1, stamp: '700@1764800000.1' });
    expect(recent.found('c', 'AWB1', { data: null, version: 1, stamp: '700@1764800000.1' })).toEqual({ data: order('new'), version: 1 });
    expect(recent.found('c', 'AWB1', { data: order('picked'), version: 2, stamp: '701@1764800000.1' })).toEqual({ data: order('picked'), version: 2 });
    expect(recent.held('c', 'AWB1')).toMatchObject({ version: 2, stamp: '701@1764800000.1' });
  });

  it('does not answer for a version it no longer holds (another read of the order replaced it meanwhile)', () => {
    const recent = new RecentOrders();
    recent.found('c', 'AWB1', { data: order('new'), version: 1, stamp: '700@1764800000.1' });
    recent.found('c', 'AWB1', { data: order('picked'), version: 2, stamp: '701@1764800000.1' });
    expect(recent.found('c', 'AWB1', { data: null, version: 1, stamp: '700@1764800000.1' })).toBeUndefined();
    // Nor for a row made anew with the same version (a reset, then the same AWB again), or on another server.
    expect(recent.found('c', 'AWB1', { data: null, version: 2, stamp: '701@1764900000.5' })).toBeUndefined();
    expect(recent.found('c', 'AWB1', { data: null, version: 2, stamp: '900@1764800000.1' })).toBeUndefined();
  });

  it('forgets an order the database no longer has', () => {
    const recent = new RecentOrders();
    recent.found('c', 'AWB1', { data: order('new'), version: 1, stamp: '700@1764800000.1' });
    expect(recent.found('c', 'AWB1', undefined)).toBeNull();
    expect(recent.held('c', 'AWB1')).toMatchObject({ version: 0, stamp: '' });
  });

  it('keeps the 1,000 read last, a read again counting as last', () => {
    const recent = new RecentOrders();
    for (let i = 0; i < 1_000; i++) recent.found('c', `AWB${i}`, { data: order('new'), version: 1, stamp: `${i}@1764800000.1` });
    recent.found('c', 'AWB0', { data: null, version: 1, stamp: '0@1764800000.1' });
    recent.found('c', 'AWB1000', { data: order('new'), version: 1, stamp: '1000@1764800000.1' });
    expect(recent.held('c', 'AWB0').version).toBe(1);
    expect(recent.held('c', 'AWB1').version).toBe(0);
    expect(recent.held('c', 'AWB1000').version).toBe(1);
  });
});
