import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Order } from '../../src/records/order.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import { freeze } from '../../src/store/freeze.js';
import { patchOf } from '../../src/store/embedded/file/journal-patch.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import type { JournalOp } from '../../src/store/embedded/file/types.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';
import { orderRecord } from './contract.js';

/** Every op of the journal segments in `dir`, oldest first. */
function journaled(dir: string): JournalOp[] {
  const segments = readdirSync(dir)
    .filter((name) => /\.wal\.\d+$/.test(name))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  return segments.flatMap((name) =>
    readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => JSON.parse(line) as JournalOp[]),
  );
}

const long = 'Jl. Setiabudi No. 45, Bandung, Jawa Barat 40154, Indonesia. '.repeat(10);

describe('the journal carries a changed record as the fields that changed', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');

  it('writes only the changed and new fields, and replays them to the same JSON, key order included', async () => {
    const store = await JournaledFile.open({ path: path() });
    const first = freeze({ id: 'r1', address: long, status: 'created', awb: null, version: 1 });
    store.put('orders', 'r1', first);
    store.commit();
    const second = freeze({ ...first, status: 'awb_generated', awb: 'JN1', version: 2, awb_generated_at: 1_700_000_000_000 });
    store.put('orders', 'r1', second);
    store.commit();

    const ops = journaled(dir()).filter((op) => op.k === 'r1');
    expect(ops[0]!.v).toEqual(first);
    expect(ops[1]).toEqual({ c: 'orders', k: 'r1', p: { status: 'awb_generated', awb: 'JN1', version: 2, awb_generated_at: 1_700_000_000_000 } });
    expect(JSON.stringify(ops[1]).length).toBeLessThan(long.length / 4);

    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(JSON.stringify(reopened.get('orders', 'r1'))).toBe(JSON.stringify(second));
    await reopened.checkpoint();
    await reopened.close();
    const fromFile = await JournaledFile.open({ path: path() });
    expect(JSON.stringify(fromFile.get('orders', 'r1'))).toBe(JSON.stringify(second));
    await fromFile.close();
  });

  it('writes the whole record when a field goes, moves or becomes undefined, or the record is not frozen', async () => {
    const store = await JournaledFile.open({ path: path() });
    const base = freeze({ a: 1, b: 2, c: 3 });
    const changes: Array<[string, Record<string, unknown>]> = [
      ['goes', freeze({ a: 1, c: 4 })],
      ['moves', freeze({ b: 2, a: 1, c: 5 })],
      ['undefined', freeze({ a: 1, b: undefined, c: 6 })],
      ['not frozen', { a: 1, b: 2, c: 7 }],
    ];
    for (const [key, after] of changes) {
      store.put('records', key, base);
      store.commit();
      store.put('records', key, after);
      store.commit();
    }
    const last = new Map(journaled(dir()).map((op) => [op.k, op]));
    for (const [key, after] of changes) expect(last.get(key), key).toEqual({ c: 'records', k: key, v: JSON.parse(JSON.stringify(after)) });

    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    for (const [key, after] of changes) expect(JSON.stringify(reopened.get('records', key)), key).toBe(JSON.stringify(after));
    await reopened.close();
  });

  it('ends as committed when a checkpoint runs while patches are written, and after a delete and a new put', async () => {
    const store = await JournaledFile.open({ path: path() });
    for (let i = 0; i < 2_000; i += 1) store.put('orders', `o${i}`, freeze({ id: i, address: long, step: 0 }));
    store.commit();
    const checkpoint = store.checkpoint();
    // Committed while the checkpoint streams the file: some records it writes before these patches, some after.
    for (let step = 1; step <= 3; step += 1) {
      for (let i = 0; i < 2_000; i += 7) store.put('orders', `o${i}`, freeze({ ...(store.get('orders', `o${i}`) as object), step, [`at${step}`]: step * 10 }));
      store.commit();
      await new Promise((resolve) => setImmediate(resolve));
    }
    store.delete('orders', 'o0');
    store.commit();
    store.put('orders', 'o0', freeze({ id: 0, step: 9 }));
    store.commit();
    store.put('orders', 'o0', freeze({ id: 0, step: 10, again: true }));
    store.commit();
    await checkpoint;
    const expected = new Map(store.entries<object>('orders').map(([key, value]) => [key, JSON.stringify(value)]));
    expect(journaled(dir()).some((op) => op.p !== undefined)).toBe(true);

    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(new Map(reopened.entries<object>('orders').map(([key, value]) => [key, JSON.stringify(value)]))).toEqual(expected);
    expect(reopened.get('orders', 'o0')).toEqual({ id: 0, step: 10, again: true });
    expect(reopened.get('orders', 'o7')).toEqual({ id: 7, address: long, step: 3, at1: 10, at2: 20, at3: 30 });
    await reopened.close();
  });

  it('skips a patch of a record that is not there at replay, and starts', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', 'kept', freeze({ v: 1 }));
    store.commit();
    const segment = readdirSync(dir()).find((name) => name.includes('.wal.'))!;
    appendFileSync(join(dir(), segment), `${JSON.stringify([{ c: 'orders', k: 'gone', p: { v: 2 } }])}\n`);
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.get('orders', 'gone')).toBeUndefined();
    expect(reopened.get('orders', 'kept')).toEqual({ v: 1 });
    await reopened.close();
  });

  it('patchOf never names __proto__ as a field to set, nor a field the record only inherits, and takes plain records only', () => {
    const before = freeze(JSON.parse('{"__proto__": 1, "a": 1}') as Record<string, unknown>);
    const after = freeze(JSON.parse('{"__proto__": 2, "a": 1}') as Record<string, unknown>);
    expect(patchOf(before, after)).toBeUndefined();
    const inherited = freeze(Object.assign(Object.create({ inherited: 1 }) as Record<string, unknown>, { a: 2 }));
    expect(patchOf(freeze({ a: 1 }), inherited)).toBeUndefined();
    expect(patchOf(freeze({ a: 1 }), freeze({ a: 1 }))).toEqual({});
    expect(patchOf(freeze([1]), freeze([2]))).toBeUndefined();
    // Not a plain record: its JSON is its toJSON's, which a patch of its fields would not follow.
    class Shown {
      constructor(readonly a: number) {}
      toJSON() {
        return { a: this.a, b: 2 };
      }
    }
    expect(patchOf(freeze(new Shown(1)), freeze(new Shown(1)))).toBeUndefined();
    expect(patchOf(freeze(Object.assign(Object.create(null) as object, { a: 1 })), freeze({ a: 2 }))).toEqual({ a: 2 });
  });
});

describe('an order that gets its AWB, in the embedded store’s journal', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const open = () => EmbeddedStorage.open({ path: path(), requestLogSize: 10 });

  it('is journaled without its sender and item, and reads back whole after a crash', async () => {
    const storage = await open();
    const item = { ...orderRecord('1', 'a', 1_000).item, receiver_address: long };
    const created = await storage.orders.insert(orderRecord('1', 'a', 1_000, { item }));
    // The client's next order has another item: the packer's "last item" of the client is no longer the first order's.
    await storage.orders.insert(orderRecord('2', 'a', 1_001, { item: { ...item, order_code: 'other' } }));
    const generated = await storage.orders.update({ ...created, status: 'awb_generated', awb: 'JN0000000001', awb_generated_at: 2_000, journey_start: 2_000, next_step: 0, updated_at: 2_000 });

    const update = journaled(dir()).filter((op) => op.c === 'orders' && op.k === '1').at(-1)!;
    expect(update.v).toBeUndefined();
    expect(Object.keys(update.p!)).toEqual(['status', 'awb', 'awb_generated_at', 'journey_start', 'next_step', 'updated_at', 'version']);
    expect(JSON.stringify(update).length).toBeLessThan(300);

    crash(path());
    const reopened = await open();
    const read = (await reopened.orders.get('1')) as Order;
    expect(JSON.stringify(read)).toBe(JSON.stringify(generated));
    expect((await reopened.orders.byAwb('JN0000000001'))?.order_no).toBe('1');
    await reopened.close();
  });
});
