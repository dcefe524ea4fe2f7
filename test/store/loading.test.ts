import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/embedded/file/schema.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

describe('loading the data file (streamed)', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');

  it('reads back what a checkpoint wrote, records of every collection, empty ones too', async () => {
    const store = await JournaledFile.open({ path: path() });
    for (let n = 0; n < 500; n += 1) store.put('orders', String(n), { n, text: 'line\nbreak "quoted" }, {', nested: { a: [1, { b: '}' }] } });
    store.put('deliveries', 'd1', { id: 'd1' });
    store.put('meta', 'default_token', 'sbx_1');
    store.put('empty', 'x', 1);
    store.delete('empty', 'x');
    store.commit();
    await store.checkpoint();
    await store.close();
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.count('orders')).toBe(500);
    expect(reopened.get('orders', '7')).toEqual({ n: 7, text: 'line\nbreak "quoted" }, {', nested: { a: [1, { b: '}' }] } });
    expect(reopened.get('deliveries', 'd1')).toEqual({ id: 'd1' });
    expect(reopened.get('meta', 'default_token')).toBe('sbx_1');
    expect(reopened.count('empty')).toBe(0);
    await reopened.close();
  });

  it('reads back multi-byte text across many checkpoint chunks and journal lines, lone surrogates too', async () => {
    const store = await JournaledFile.open({ path: path() });
    // ~1.5 MB of 2-, 3- and 4-byte characters: the checkpoint writes it in chunks of 256 KiB.
    const text = (n: number) => `${n} é 雅加达 🚚 \ud83d ${'ñ漢😀'.repeat(300)}`;
    for (let n = 0; n < 400; n += 1) {
      store.put('orders', `k${n}`, { n, text: text(n) });
      if (n % 7 === 0) store.commit(); // journal lines of every size
    }
    store.commit();
    await store.checkpoint();
    for (let n = 400; n < 450; n += 1) store.put('orders', `k${n}`, { n, text: text(n) });
    store.commit(); // these stay in the journal
    await store.close();
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.count('orders')).toBe(450);
    for (const n of [0, 1, 199, 399, 400, 449]) expect(reopened.get('orders', `k${n}`)).toEqual({ n, text: text(n) });
    await reopened.close();
  });

  it('reads back keys with quotes, backslashes and colons, and records that end in a brace', async () => {
    const store = await JournaledFile.open({ path: path() });
    const keys = ['plain', 'with "quotes":', 'back\\slash', 'colon:{}', 'é unicode', ''];
    for (const key of keys) store.put('meta', key, { key, last: { deep: '}' } });
    store.put('meta', 'number', 7);
    store.put('meta', 'text', 'ends in a brace }');
    store.commit();
    await store.checkpoint();
    await store.close();
    const reopened = await JournaledFile.open({ path: path() });
    for (const key of keys) expect(reopened.get('meta', key)).toEqual({ key, last: { deep: '}' } });
    expect(reopened.get('meta', 'number')).toBe(7);
    expect(reopened.get('meta', 'text')).toBe('ends in a brace }');
    expect(reopened.count('meta')).toBe(keys.length + 2);
    await reopened.close();
  });

  it('keeps records in the order they were made, numeric keys too, and a key named __proto__ as a record', async () => {
    const store = await JournaledFile.open({ path: path() });
    for (const key of ['z', '10', '__proto__', '2', 'a']) store.put('meta', key, { key });
    store.commit();
    const order = () => reopened.entries<{ key: string }>('meta').map(([key, value]) => [key, value.key]);
    let reopened = store;
    expect(order()).toEqual(['z', '10', '__proto__', '2', 'a'].map((key) => [key, key]));
    await store.checkpoint(); // from the data file
    await store.close();
    reopened = await JournaledFile.open({ path: path() });
    expect(order()).toEqual(['z', '10', '__proto__', '2', 'a'].map((key) => [key, key]));
    reopened.put('meta', 'last', { key: 'last' });
    reopened.commit();
    crash(path()); // and from the journal: the process "dies" without closing
    reopened = await JournaledFile.open({ path: path() });
    expect(order().map(([key]) => key)).toEqual(['z', '10', '__proto__', '2', 'a', 'last']);
    await reopened.close();
  });

  it('reads a record larger than the read chunk (1 MiB) whole', async () => {
    const store = await JournaledFile.open({ path: path() });
    const big = { text: 'é'.repeat(1_500_000) };
    store.put('orders', 'big', big);
    store.put('orders', 'small', { n: 1 });
    store.commit();
    await store.checkpoint();
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.get('orders', 'big')).toEqual(big);
    expect(reopened.get('orders', 'small')).toEqual({ n: 1 });
    await reopened.close();
  });

  it('reads a file of another layout: pretty-printed by hand', async () => {
    const data = { schema_version: SCHEMA_VERSION, journal_generation: 0, orders: { '1': { order_no: '1', items: [1, 2] } }, meta: { default_token: 'sbx_x' } };
    writeFileSync(path(), JSON.stringify(data, null, 2));
    const store = await JournaledFile.open({ path: path() });
    expect(store.get('orders', '1')).toEqual({ order_no: '1', items: [1, 2] });
    expect(store.get('meta', 'default_token')).toBe('sbx_x');
    await store.close();
  });

  it('reads and migrates the schema-v0 lowdb file of sandbox 0.0.x', async () => {
    copyFileSync('test/fixtures/sandbox-v0.json', path());
    const v0 = JSON.parse(readFileSync(path(), 'utf8'));
    const store = await JournaledFile.open({ path: path() });
    expect(store.count('orders')).toBe(v0.orders.length);
    expect(store.get('meta', 'default_token')).toBe(v0.default_token);
    await store.close();
  });

  it('refuses a file that holds no JSON object, and leaves it untouched', async () => {
    writeFileSync(path(), '[1, 2]');
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(/JSON object|not valid JSON/);
    expect(readFileSync(path(), 'utf8')).toBe('[1, 2]');
  });

  it('refuses a data file cut short in its own layout rather than load part of it', async () => {
    const store = await JournaledFile.open({ path: path() });
    for (let n = 0; n < 50; n += 1) store.put('orders', String(n), { n });
    store.commit();
    await store.checkpoint();
    await store.close();
    const text = readFileSync(path(), 'utf8');
    writeFileSync(path(), text.slice(0, text.length / 2));
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(/not valid JSON.*left untouched/);
  });
});
