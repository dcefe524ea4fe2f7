import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/embedded/file/schema.js';
import { SnapshotFile } from '../../src/store/embedded/file/snapshot-file.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { DataFileError, type JournaledFileData } from '../../src/store/embedded/file/types.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { tempDir } from '../support/tmp.js';

/** A data file as sandbox 0.1 (schema 1) wrote it, in its own line layout, with a journal segment after it. */
async function writeVersion1(path: string): Promise<void> {
  const data: JournaledFileData = {
    schema_version: 1,
    journal_generation: 3,
    meta: { seed: 's1', counters: { order: 5, batch: 2, awb: { jne: 7 } }, webhook_counter: 4 },
    orders: { '51': { order_no: '51', client_id: 'client-a', status: 'created' } },
    deliveries: {},
    webhook_endpoints: { 'client-a': { client_id: 'client-a', url: 'http://127.0.0.1:9/hook', updated_at: 1 } },
    webhook_secrets: { 'client-a': 'whsec_a' },
  };
  await new SnapshotFile(path).write(data);
  // Changes after the file, in schema 1: a second order, a counter, a secret of client B.
  const commit = [
    { c: 'orders', k: '52', v: { order_no: '52', client_id: 'client-b', status: 'created' } },
    { c: 'meta', k: 'counters', v: { order: 6, batch: 3, awb: { jne: 7 } } },
    { c: 'webhook_secrets', k: 'client-b', v: 'whsec_b' },
  ];
  writeFileSync(`${path}.wal.3`, `${JSON.stringify(commit)}\n`);
}

describe('opening a data file of schema version 1', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');

  it('replays its journal in schema 1, migrates the whole to the current version and writes it back at once', async () => {
    await writeVersion1(path());
    const store = await JournaledFile.open({ path: path() });
    expect(store.get('orders', '52')).toMatchObject({ client_id: 'client-b' });
    expect(store.entries('counters').sort()).toEqual([['awb:jne', 7], ['batch', 3], ['delivery', 4], ['order', 6]]);
    expect(store.get('clients', 'client-b')).toMatchObject({ client_id: 'client-b', webhook: null, generated_secret: 'whsec_b' });
    expect(store.get('clients', 'client-a')).toMatchObject({ webhook: { url: 'http://127.0.0.1:9/hook' }, generated_secret: 'whsec_a' });
    expect(store.get('meta', 'counters')).toBeUndefined();
    // Written back before open() resolved: the file is at the current version and no schema-1 journal is left.
    const file = JSON.parse(readFileSync(path(), 'utf8')) as JournaledFileData;
    expect(file.schema_version).toBe(SCHEMA_VERSION);
    expect(existsSync(`${path()}.wal.3`)).toBe(false);
    store.put('orders', '53', { order_no: '53' });
    store.commit();
    await store.close();

    const again = await JournaledFile.open({ path: path() });
    expect(again.count('orders')).toBe(3);
    expect(again.get('counters', 'order')).toBe(6);
    await again.close();
  });

  it('refuses to start when the migrated file cannot be written, leaving the old file, its journal and no lock', async () => {
    await writeVersion1(path());
    const before = readdirSync(dir()).map((name) => [name, readFileSync(join(dir(), name), 'utf8')]);
    const fileSystem = new FaultyFileSystem();
    fileSystem.failing = 'ENOSPC';
    await expect(JournaledFile.open({ path: path(), fileSystem })).rejects.toThrow(DataFileError);
    await expect(JournaledFile.open({ path: path(), fileSystem })).rejects.toThrow(new RegExp(`migrated to schema version ${SCHEMA_VERSION} \\(ENOSPC.*free some space`, 'i'));
    // The old files are as they were, and nothing else: no empty journal segment, no lock.
    expect(readdirSync(dir()).map((name) => [name, readFileSync(join(dir(), name), 'utf8')])).toEqual(before);
    const store = await JournaledFile.open({ path: path() }); // space is back
    expect(store.get('clients', 'client-b')).toMatchObject({ generated_secret: 'whsec_b' });
    await store.close();
  });
});

describe('opening a data file of schema version 2', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');

  it('replays its journal of whole records and writes the file back at the current version at once', async () => {
    const order = { order_no: '61', client_id: 'client-a', status: 'created', awb: null };
    await new SnapshotFile(path()).write({ schema_version: 2, journal_generation: 1, meta: {}, orders: { '61': order }, deliveries: {}, clients: {}, counters: {}, jobs: {} });
    writeFileSync(`${path()}.wal.1`, `${JSON.stringify([{ c: 'orders', k: '61', v: { ...order, status: 'awb_generated', awb: 'JN1' } }])}\n`);
    const store = await JournaledFile.open({ path: path() });
    expect(store.get('orders', '61')).toEqual({ ...order, status: 'awb_generated', awb: 'JN1' });
    expect((JSON.parse(readFileSync(path(), 'utf8')) as JournaledFileData).schema_version).toBe(SCHEMA_VERSION);
    expect(existsSync(`${path()}.wal.1`)).toBe(false);
    await store.close();
  });
});
