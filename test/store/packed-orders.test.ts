import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Order, TrackingEntry } from '../../src/records/order.js';
import type { Delivery } from '../../src/records/delivery.js';
import { emptyData } from '../../src/store/embedded/file/schema.js';
import { SnapshotFile } from '../../src/store/embedded/file/snapshot-file.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import type { Storage } from '../../src/store/port.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';
import { orderRecord } from './contract.js';

const played = (at: number) => [
  { step: 2, at: at + 2_000.5 },
  { step: 1, at: at + 1_000 },
  { step: 0, at },
];
const cancellation: TrackingEntry = { note: 'Cancelled', description: 'Cancelled by the shipper', branch: 'Jakarta', update_on: 1_700_000_000, status: '5', pod_photo: null };

/** The records of a collection as the data file holds them, parsed without the store. */
function recordsInFile(path: string, collection: string): Record<string, unknown> {
  return (JSON.parse(readFileSync(path, 'utf8')) as Record<string, Record<string, unknown>>)[collection]!;
}

describe('orders kept packed by the embedded store (played steps as numbers, shared sender and item)', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const open = () => EmbeddedStorage.open({ path: path(), requestLogSize: 10 });

  async function write(storage: Storage): Promise<Order[]> {
    const orders = [
      orderRecord('1', 'a', 1_000, { status: 'delivered', history: played(1_700_000_000_000) }),
      orderRecord('2', 'a', 2_000, { status: 'in_transit', history: played(1_700_000_100_000) }),
      orderRecord('3', 'a', 3_000, { status: 'cancelled', history: [cancellation, ...played(1_700_000_200_000)] }),
      orderRecord('4', 'b', 4_000, { sender: { ...orderRecord('4', 'b', 4_000).sender, sender_name: 'Another shop' }, webhook_chaos: ['duplicate'] }),
    ];
    for (const order of orders) await storage.orders.insert(order);
    return orders.map((order) => ({ ...order, version: 1 }));
  }

  it('gives back every order as written, deeply frozen, from memory, from the journal and from the data file', async () => {
    const storage = await open();
    const written = await write(storage);
    const read = async (s: Storage) => Promise.all(written.map((o) => s.orders.get(o.order_no)));
    const check = (orders: Array<Order | undefined>) => {
      expect(orders).toEqual(written);
      for (const order of orders) {
        expect(Object.isFrozen(order)).toBe(true);
        expect(Object.isFrozen(order!.sender) && Object.isFrozen(order!.item) && Object.isFrozen(order!.history)).toBe(true);
        for (const entry of order!.history) expect(Object.isFrozen(entry)).toBe(true);
      }
    };
    check(await read(storage));
    crash(path()); // no checkpoint: the next start replays the journal
    const journalOnly = await open();
    check(await read(journalOnly));
    expect((await journalOnly.orders.list('a', { limit: 2 })).items).toEqual([written[2], written[1]]);
    expect((await journalOnly.orders.list('a', { limit: 10, status: 'delivered' })).items).toEqual([written[0]]);
    expect(await journalOnly.orders.createdBefore(2_500, 10)).toEqual([written[0], written[1]]);
    await journalOnly.checkpoint();
    await journalOnly.close();
    const fromFile = await open();
    check(await read(fromFile));
    await fromFile.close();
  });

  it('journals played steps as { step, at } entries, and writes the data file shorter: steps as numbers, a shared sender as the order it was written with', async () => {
    const storage = await open();
    const written = await write(storage);
    const journal = readdirSync(dir()).filter((name) => name.startsWith('sandbox.json.wal.'));
    const lines = journal.flatMap((name) => readFileSync(join(dir(), name), 'utf8').split('\n').filter(Boolean));
    const journaled = lines.map((line) => JSON.parse(line) as Array<{ c: string; v: Order }>).flat();
    expect(journaled.filter((op) => op.c === 'orders').map((op) => op.v)).toEqual(written);
    await storage.checkpoint();
    await storage.close();
    const inFile = recordsInFile(path(), 'orders') as Record<string, Record<string, unknown>>;
    const steps = (at: number) => [2, at + 2_000.5, 1, at + 1_000, 0, at];
    expect(inFile['1']).toEqual({ ...written[0], history: steps(1_700_000_000_000) });
    // Orders 2 and 3 of client A have order 1's sender; each item has its own order code.
    expect(inFile['2']).toEqual({ ...written[1], sender: '=1', history: steps(1_700_000_100_000) });
    // A history with anything but played steps (a cancellation) is written as it is.
    expect(inFile['3']).toEqual({ ...written[2], sender: '=1' });
    expect(inFile['4']).toEqual(written[3]);
    // The fields keep their order.
    expect(Object.keys(inFile['2']!)).toEqual(Object.keys(written[1]!));
    const reopened = await open();
    // As JSON too: the fields in their order.
    expect(JSON.stringify(await Promise.all(written.map((o) => reopened.orders.get(o.order_no))))).toBe(JSON.stringify(written));
    // Read back, the orders of client A share one sender again.
    expect((await reopened.orders.get('3'))!.sender).toBe((await reopened.orders.get('1'))!.sender);
    await reopened.close();
  });

  it('writes a shared item as a reference too, and reads a sender or item that is a string starting with "=" back as it was', async () => {
    const storage = await open();
    const same = orderRecord('1', 'a', 1_000).item;
    const odd = [
      orderRecord('1', 'a', 1_000, { item: same }),
      orderRecord('2', 'a', 1_001, { item: same }),
      orderRecord('3', 'c', 1_002, { sender: '=1' as unknown as Order['sender'], item: '==x' as unknown as Order['item'] }),
      orderRecord('4', 'c', 1_003, { sender: 'plain text' as unknown as Order['sender'] }),
    ];
    for (const order of odd) await storage.orders.insert(order);
    await storage.checkpoint();
    await storage.close();
    const inFile = recordsInFile(path(), 'orders') as Record<string, Record<string, unknown>>;
    expect([inFile['2']!.sender, inFile['2']!.item]).toEqual(['=1', '=1']);
    expect([inFile['3']!.sender, inFile['3']!.item, inFile['4']!.sender]).toEqual(['==1', '===x', 'plain text']);
    const reopened = await open();
    expect(await Promise.all(odd.map((o) => reopened.orders.get(o.order_no)))).toEqual(odd.map((o) => ({ ...o, version: 1 })));
    await reopened.close();
  });

  it('refuses to start on a data file whose order takes its sender from an order not before it, naming both, and leaves the file as it was', async () => {
    const storage = await open();
    await write(storage);
    await storage.checkpoint();
    await storage.close();
    const text = readFileSync(path(), 'utf8').replace('"sender":"=1"', '"sender":"=4"');
    writeFileSync(path(), text);
    await expect(open()).rejects.toThrow(/Order 2 in the data file takes its sender from order 4, which is not before it/);
    expect(readFileSync(path(), 'utf8')).toBe(text);
  });

  it('opens a data file of schema version 3 (orders as their JSON) and writes it back at once in the shorter form, the orders the same', async () => {
    const orders = [orderRecord('1', 'a', 1_000, { history: played(1_700_000_000_000) }), orderRecord('2', 'a', 2_000, { history: played(1_700_000_100_000) })].map((o) => ({ ...o, version: 1 }));
    const data = { ...emptyData(), schema_version: 3, orders: Object.fromEntries(orders.map((o) => [o.order_no, o])) };
    await new SnapshotFile(path()).write(data);
    expect(recordsInFile(path(), 'orders')['2']).toEqual(orders[1]);
    const storage = await open();
    expect(await Promise.all(orders.map((o) => storage.orders.get(o.order_no)))).toEqual(orders);
    await storage.close();
    expect(JSON.parse(readFileSync(path(), 'utf8')).schema_version).toBe(4);
    expect(recordsInFile(path(), 'orders')['2']).toEqual({ ...orders[1], sender: '=1', history: [2, 1_700_000_102_000.5, 1, 1_700_000_101_000, 0, 1_700_000_100_000] });
  });

  it('gives back every order as last committed after a checkpoint written while orders changed and were deleted, then a crash', async () => {
    const storage = await open();
    const senders = [orderRecord('0', 'a', 0).sender, { ...orderRecord('0', 'a', 0).sender, sender_name: 'Toko Dua' }, { ...orderRecord('0', 'a', 0).sender, sender_name: 'Toko Tiga' }];
    const expected = new Map<string, string>();
    const count = 3_000;
    for (let i = 1; i <= count; i++) {
      const order = orderRecord(String(i), i % 2 ? 'a' : 'b', i, { sender: senders[i % 3]!, history: played(1_700_000_000_000 + i) });
      expected.set(String(i), JSON.stringify(await storage.orders.insert(order)));
    }
    let stop = false;
    let changes = 0;
    const churn = (async () => {
      for (let k = 1; !stop; k = ((k * 7_919) % count) + 1) {
        const current = await storage.orders.get(String(k));
        if (current) {
          // Every third change deletes an order (perhaps one whose sender later lines refer to); the others give it another sender.
          if (changes % 3 === 0) {
            await storage.orders.remove(current);
            expected.delete(current.order_no);
          } else {
            const updated = await storage.orders.update({ ...current, sender: senders[changes % 3]!, status: `changed-${changes}` as Order['status'] });
            expected.set(current.order_no, JSON.stringify(updated));
          }
        }
        changes += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await storage.checkpoint();
    stop = true;
    await churn;
    expect(changes).toBeGreaterThan(0);
    crash(path());
    const reopened = await open();
    for (let i = 1; i <= count; i++) {
      const read = await reopened.orders.get(String(i));
      expect(read === undefined ? undefined : JSON.stringify(read)).toBe(expected.get(String(i)));
    }
    await reopened.close();
  });

  it('reads a data file of this version reformatted by hand (not one record per line) the same', async () => {
    const storage = await open();
    const written = await write(storage);
    await storage.checkpoint();
    await storage.close();
    writeFileSync(path(), JSON.stringify(JSON.parse(readFileSync(path(), 'utf8')), null, 2));
    const reopened = await open();
    expect(await Promise.all(written.map((o) => reopened.orders.get(o.order_no)))).toEqual(written);
    await reopened.close();
  });

  it('keeps an order on its own when another of the client with the same sender changes', async () => {
    const storage = await open();
    await write(storage);
    const first = (await storage.orders.get('1'))!;
    expect(() => {
      (first.sender as { sender_name: string }).sender_name = 'changed in place';
    }).toThrow(TypeError);
    await storage.orders.update({ ...first, sender: { ...first.sender, sender_name: 'Moved' }, history: [{ step: 3, at: 1 }, ...first.history] });
    expect((await storage.orders.get('1'))!.sender.sender_name).toBe('Moved');
    expect((await storage.orders.get('1'))!.history).toEqual([{ step: 3, at: 1 }, ...played(1_700_000_000_000)]);
    expect((await storage.orders.get('2'))!.sender.sender_name).toBe('S');
    await storage.close();
  });

  it('keeps the order of a sender’s keys as sent, also when another order of the client has the same fields in another order', async () => {
    const storage = await open();
    const first = orderRecord('1', 'a', 1_000);
    const reversed = Object.fromEntries(Object.entries(first.sender).reverse()) as Order['sender'];
    await storage.orders.insert(first);
    await storage.orders.insert(orderRecord('2', 'a', 1_001, { sender: reversed }));
    expect(Object.keys((await storage.orders.get('2'))!.sender)).toEqual(Object.keys(reversed));
    await storage.close();
    const reopened = await open();
    expect(Object.keys((await reopened.orders.get('2'))!.sender)).toEqual(Object.keys(reversed));
    expect(Object.keys((await reopened.orders.get('1'))!.sender)).toEqual(Object.keys(first.sender));
    await reopened.close();
  });

  it('gives back items of one multi-item create as sent, each with its own order code and keys in the order sent', async () => {
    const storage = await open();
    // Texts longer than V8 shares by itself, equal between the items but for the order code.
    const base = { ...orderRecord('1', 'a', 1_000).item, receiver_name: 'Budi Santoso Wijaya', receiver_address: 'Jl. Setiabudi No. 45, Bandung', item_name: 'Kemeja batik lengan panjang' };
    const withProto = JSON.parse(JSON.stringify({ ...base, order_code: 'code-5' }).replace(/^\{/, '{"__proto__":"a field of its own",')) as Record<string, unknown>;
    expect(Object.keys(withProto)[0]).toBe('__proto__');
    const items = [base, { ...base, order_code: 'code-2' }, { ...base, order_code: 'code-3', receiver_name: 'Someone else' }, Object.fromEntries(Object.entries({ ...base, order_code: 'code-4' }).reverse()), withProto, { ...base, order_code: 'code-6' }];
    const written = items.map((item, i) => orderRecord(String(i + 1), 'a', 1_000 + i, { item: item as Order['item'] }));
    for (const order of written) await storage.orders.insert(order);
    const check = async (s: Storage) => {
      for (const order of written) {
        const read = (await s.orders.get(order.order_no))!;
        expect(JSON.stringify(read.item)).toBe(JSON.stringify(order.item));
        expect(Object.keys(read.item)).toEqual(Object.keys(order.item));
        expect(Object.isFrozen(read.item)).toBe(true);
      }
    };
    await check(storage);
    crash(path());
    const journalOnly = await open();
    await check(journalOnly);
    await journalOnly.checkpoint();
    await journalOnly.close();
    const fromFile = await open();
    await check(fromFile);
    await fromFile.close();
  });
});

describe('deliveries kept packed by the embedded store (one shared empty list)', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const open = () => EmbeddedStorage.open({ path: path(), requestLogSize: 10 });
  const held = 'no webhook URL is set for this client';
  const delivery = (id: string, seq: number, extra: Partial<Delivery> = {}): Omit<Delivery, 'version'> => ({
    id, seq, client_id: 'a', event: 'awb.generated', order_no: `o${seq}`, body: `{"order_no":"o${seq}"}`, chaos: [], status: 'paused',
    created_at: 1_700_000_000_000 + seq, next_attempt_at: null, last_error: `${held}`, attempts: [], ...extra,
  });
  const attempt = { n: 1, at: 1_700_000_000_500, trigger: 'schedule' as const, chaos: null, url: 'https://example.test/hooks', webhook_timestamp: 1_700_000_000, status_code: 500, duration_ms: 3, error: 'HTTP 500', response_body: 'no' };

  it('gives back every delivery as written, frozen, from memory, the journal and the data file, and writes the same JSON', async () => {
    const storage = await open();
    const written = [delivery('msg_1', 1), delivery('msg_2', 2, { chaos: ['duplicate'] }), delivery('msg_3', 3, { status: 'failed', last_error: 'HTTP 500', attempts: [attempt] }), delivery('msg_4', 4, { last_error: null })];
    for (const d of written) await storage.deliveries.insert(d as never);
    const expected = written.map((d) => ({ ...d, version: 1 }));
    const check = async (s: Storage) => {
      const read = await Promise.all(written.map((d) => s.deliveries.get(d.id)));
      expect(read).toEqual(expected);
      for (const d of read) expect(Object.isFrozen(d) && Object.isFrozen(d!.attempts) && Object.isFrozen(d!.chaos)).toBe(true);
      // The empty lists are one array, and cannot be changed through any of them.
      expect(read[0]!.attempts).toBe(read[1]!.attempts);
      expect(read[0]!.chaos).toBe(read[3]!.chaos);
      expect(() => (read[0]!.attempts as unknown[]).push(attempt)).toThrow(TypeError);
      expect(read[1]!.attempts).toEqual([]);
    };
    await check(storage);
    const updated = await storage.deliveries.update({ ...(await storage.deliveries.get('msg_1'))!, attempts: [attempt], status: 'failed', last_error: 'HTTP 500' });
    expect(updated.attempts).toEqual([attempt]);
    expect((await storage.deliveries.get('msg_2'))!.attempts).toEqual([]);
    expected[0] = { ...expected[0]!, attempts: [attempt], status: 'failed', last_error: 'HTTP 500', version: 2 };
    const again = await storage.deliveries.update({ ...(await storage.deliveries.get('msg_1'))!, attempts: [], status: 'paused', last_error: held });
    expected[0] = { ...expected[0]!, attempts: [], status: 'paused', last_error: held, version: 3 };
    expect(again).toEqual(expected[0]);
    crash(path());
    const journalOnly = await open();
    await check(journalOnly);
    await journalOnly.checkpoint();
    await journalOnly.close();
    expect(Object.values(recordsInFile(path(), 'deliveries'))).toEqual(expected);
    const fromFile = await open();
    await check(fromFile);
    await fromFile.close();
  });

  it('gives a delivery of an older data file, written without a version, version 0, and updates it twice', async () => {
    const data = emptyData();
    const { version: _, ...old } = { ...delivery('msg_old', 1), version: 0 };
    (data.deliveries as Record<string, unknown>).msg_old = old;
    await new SnapshotFile(path()).write(data);
    const storage = await open();
    const read = (await storage.deliveries.get('msg_old'))!;
    expect(read.version).toBe(0);
    const once = await storage.deliveries.update({ ...read, status: 'failed', last_error: 'HTTP 500' });
    const twice = await storage.deliveries.update({ ...once, status: 'paused', last_error: held });
    expect([once.version, twice.version]).toEqual([1, 2]);
    await storage.close();
  });
});
