import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/embedded/file/schema.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { DataFileError } from '../../src/store/embedded/file/types.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

describe('JournaledFile', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'data', 'sandbox.json');

  it('creates the folder and keeps committed records across a reopen', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', '1', { order_no: '1' });
    store.commit();
    await store.close();
    const again = await JournaledFile.open({ path: path() });
    expect(again.get('orders', '1')).toEqual({ order_no: '1' });
    await again.close();
  });

  it('recovers committed changes from the journal when the process dies before a checkpoint', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', '1', { v: 1 });
    store.put('orders', '2', { v: 2 });
    store.commit();
    store.put('orders', '1', { v: 3 });
    store.delete('orders', '2');
    store.commit();
    // No close(): as after a crash, only the journal holds the changes.
    crash(path());
    const reopened = await JournaledFile.open({ path: `${path()}` });
    expect(reopened.get('orders', '1')).toEqual({ v: 3 });
    expect(reopened.get('orders', '2')).toBeUndefined();
    await reopened.close();
  });

  it('ignores a torn last journal line (a write cut short by a crash)', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', '1', { v: 1 });
    store.commit();
    const wal = readdirSync(join(dir(), 'data')).find((f) => f.includes('.wal.'))!;
    appendFileSync(join(dir(), 'data', wal), '{"c":"orders","k":"2","v":{"v"');
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.get('orders', '1')).toEqual({ v: 1 });
    expect(reopened.get('orders', '2')).toBeUndefined();
    await reopened.close();
  });

  it('keeps working after a torn line: the next changes survive a second crash', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', '1', { v: 1 });
    store.commit();
    const wal = readdirSync(join(dir(), 'data')).find((f) => f.includes('.wal.'))!;
    appendFileSync(join(dir(), 'data', wal), '{"c":"orders","k":"torn"');
    crash(path());
    const second = await JournaledFile.open({ path: path() });
    second.put('orders', '2', { v: 2 });
    second.commit();
    // Crash again, before any checkpoint.
    crash(path());
    const third = await JournaledFile.open({ path: path() });
    expect(third.get('orders', '1')).toEqual({ v: 1 });
    expect(third.get('orders', '2')).toEqual({ v: 2 });
    expect(third.get('orders', 'torn')).toBeUndefined();
    await third.close();
  });

  it('writes a readable data file at the current schema version on checkpoint and drops the journal it holds', async () => {
    const store = await JournaledFile.open({ path: path() });
    for (let i = 0; i < 50; i += 1) store.put('orders', String(i), { i });
    store.commit();
    await store.checkpoint();
    const file = JSON.parse(readFileSync(path(), 'utf8'));
    expect(file.schema_version).toBe(SCHEMA_VERSION);
    expect(Object.keys(file.orders)).toHaveLength(50);
    const wals = readdirSync(join(dir(), 'data')).filter((f) => f.includes('.wal.'));
    expect(wals).toHaveLength(1);
    expect(readFileSync(join(dir(), 'data', wals[0]!), 'utf8')).toBe('');
    await store.close();
  });

  it('checkpoints by itself once the journal passes its size limit', async () => {
    const store = await JournaledFile.open({ path: path(), checkpointBytes: 1_000 });
    for (let i = 0; i < 40; i += 1) {
      store.put('orders', String(i), { i, padding: 'x'.repeat(50) });
      store.commit();
    }
    await vi.waitFor(() => expect(Object.keys(JSON.parse(readFileSync(path(), 'utf8')).orders).length).toBeGreaterThan(0), { timeout: 10_000 });
    await store.close();
  });

  it('writes a new data file at once, with its schema version, so its journal never stands without one', async () => {
    const store = await JournaledFile.open({ path: path() });
    expect(JSON.parse(readFileSync(path(), 'utf8'))).toMatchObject({ schema_version: SCHEMA_VERSION, orders: {} });
    store.put('orders', '1', { v: 1 });
    store.commit();
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.get('orders', '1')).toEqual({ v: 1 });
    await reopened.close();
  });

  it('refuses to start when a new data file cannot be written (a full disk), leaving no file behind', async () => {
    const fileSystem = new FaultyFileSystem();
    fileSystem.failing = 'ENOSPC';
    const errors: Error[] = [];
    await expect(JournaledFile.open({ path: path(), fileSystem, onError: (error) => errors.push(error) })).rejects.toThrow(new RegExp(`Cannot write the new data file ${path()} \\(ENOSPC`));
    expect(readdirSync(dirname(path()))).toEqual([]);
    // The refusal is the one word: no store error besides it promising a checkpoint "again in 30s" that no running sandbox will make.
    expect(errors).toEqual([]);
  });

  it('checkpoint() resolves once the data file holds everything committed before the call, even while one runs', async () => {
    const store = await JournaledFile.open({ path: path(), checkpointBytes: 1_000 });
    for (let i = 0; i < 40; i += 1) {
      store.put('orders', String(i), { i, padding: 'x'.repeat(50) });
      store.commit();
    }
    await store.checkpoint();
    expect(Object.keys(JSON.parse(readFileSync(path(), 'utf8')).orders)).toHaveLength(40);
    await store.close();
  });

  it('refuses a corrupt data file with a clear message and leaves it untouched', async () => {
    const bad = join(dir(), 'bad.json');
    writeFileSync(bad, '{"schema_version": 1, "orders": {');
    await expect(JournaledFile.open({ path: bad })).rejects.toThrow(DataFileError);
    await expect(JournaledFile.open({ path: bad })).rejects.toThrow(/not valid JSON.*left untouched/);
    expect(readFileSync(bad, 'utf8')).toBe('{"schema_version": 1, "orders": {');
  });

  it('refuses a data file from a newer sandbox', async () => {
    const newer = join(dir(), 'newer.json');
    writeFileSync(newer, JSON.stringify({ schema_version: SCHEMA_VERSION + 1, journal_generation: 0, orders: {} }));
    await expect(JournaledFile.open({ path: newer })).rejects.toThrow(/newer than this sandbox/);
  });

  it('removes at start the temp files of a checkpoint cut short by a crash, and keeps the data file', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', '1', { v: 1 });
    store.commit();
    await store.checkpoint();
    await store.close();
    const folder = join(dir(), 'data');
    writeFileSync(join(folder, 'sandbox.json.tmp-4242'), '{"schema_version":1,"journal_generation":9,\n"orders":{');
    writeFileSync(join(folder, `sandbox.json.tmp-${process.pid}`), '{');
    writeFileSync(join(folder, 'sandbox.json.tmp-notes'), 'not a checkpoint');
    const reopened = await JournaledFile.open({ path: path() });
    expect(readdirSync(folder).filter((f) => f.includes('.tmp-'))).toEqual(['sandbox.json.tmp-notes']);
    expect(reopened.get('orders', '1')).toEqual({ v: 1 });
    await reopened.close();
  });

  it('keeps the temp file of a checkpoint cut short when the start is refused: it may be the newest copy someone repairing by hand wants', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', '1', { v: 1 });
    store.commit();
    await store.close();
    const folder = join(dir(), 'data');
    writeFileSync(join(folder, 'sandbox.json.tmp-4242'), '{"schema_version":1,"journal_generation":9,\n"orders":{');
    const generation = (JSON.parse(readFileSync(join(folder, 'sandbox.json'), 'utf8')) as { journal_generation: number }).journal_generation;
    writeFileSync(join(folder, `sandbox.json.wal.${generation}`), '{"not a commit"\n');
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(`sandbox.json.wal.${generation} is damaged at line 1`);
    expect(readFileSync(join(folder, 'sandbox.json.tmp-4242'), 'utf8')).toBe('{"schema_version":1,"journal_generation":9,\n"orders":{');
  });

  it('keeps nothing on disk with :memory:', async () => {
    const store = await JournaledFile.open({ path: ':memory:' });
    store.put('orders', '1', { v: 1 });
    store.commit();
    await store.close();
    expect(existsSync(join(dir(), ':memory:'))).toBe(false);
    expect(store.isPersistent).toBe(false);
  });
});
