import { describe, expect, it } from 'vitest';
import { OrderPacker } from '../../src/store/embedded/order-packer.js';

const order = (no: string, sender: object) => ({ order_no: no, client_id: 'c', sender, item: { order_code: no }, history: [] });
const senderOf = (packed: unknown) => JSON.stringify((packed as { sender: object }).sender);

describe("the order packer's shared parts", () => {
  it('shares a sender of the same fields in the same order, and keeps one in another order, or with fewer fields, as it is', () => {
    const packer = new OrderPacker();
    const first = packer.pack(order('1', { a: '1', b: '2' })) as { sender: object };
    const same = packer.pack(order('2', { a: '1', b: '2' })) as { sender: object };
    expect(same.sender).toBe(first.sender);
    expect(senderOf(packer.pack(order('3', { b: '2', a: '1' })))).toBe('{"b":"2","a":"1"}');
    expect(senderOf(packer.pack(order('4', { b: '2' })))).toBe('{"b":"2"}');
    expect(senderOf(packer.pack(order('5', { b: '2', a: '9' })))).toBe('{"b":"2","a":"9"}');
  });

  it('never takes an inherited field for one of the part: the next part of those fields keeps all of its own', () => {
    const packer = new OrderPacker();
    packer.pack(order('1', { a: '1', b: '2' }));
    packer.pack(order('2', Object.assign(Object.create({ b: '2' }) as object, { a: '9' })));
    expect(senderOf(packer.pack(order('3', { a: '9', b: '2' })))).toBe('{"a":"9","b":"2"}');
    // Nor shares the last part with one that has a field of it only by inheritance.
    packer.pack(order('4', { a: '1', b: '2' }));
    expect(senderOf(packer.pack(order('5', Object.assign(Object.create({ b: '2' }) as object, { a: '1' }))))).toBe('{"a":"1"}');
  });
});
