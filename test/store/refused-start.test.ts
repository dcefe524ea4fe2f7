import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildServices } from '../../src/app/sandbox.js';
import type { SandboxOptions } from '../../src/config/options.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

/**
 * A start on a disk all but full: the lock file takes the last block, and the start's first
 * journal line (the real clock's save, made at every start on a real clock) is refused.
 */
describe('a start whose first write the disk refuses', () => {
  const dir = tempDir();
  const data = () => join(dir(), 'sandbox.json');
  const options = (more: SandboxOptions = {}): SandboxOptions => ({ data: data(), tokens: ['disk'], logLevel: 'silent', ...more });
  /** Every file beside the data file, with the SHA-256 of its bytes. */
  const files = () => Object.fromEntries(readdirSync(dir()).map((name) => [name, createHash('sha256').update(readFileSync(join(dir(), name))).digest('hex')]));

  /** A data file of an earlier start, stopped cleanly: the file and an empty journal segment. */
  async function earlierStart(): Promise<void> {
    const services = await buildServices(options({ clock: 'manual' }));
    await services.storage.close();
  }

  it('stops naming the journal segment and "Free some space and start again.", the lock gone and every file as it was', async () => {
    await earlierStart();
    const before = files();
    const fileSystem = new FaultyFileSystem();
    fileSystem.failing = 'ENOSPC';
    const segment = Object.keys(before).find((name) => name.includes('.wal.'))!;
    await expect(buildServices(options({ clock: 'real' }), { storeFileSystem: fileSystem })).rejects.toThrow(
      `Cannot write the journal ${join(dir(), segment)} (ENOSPC: injected, write) as the sandbox started; nothing was left behind. Free some space and start again.`,
    );
    expect(fileSystem.failures).toBe(1); // the one line of the start: the real clock's save
    expect(files()).toEqual(before); // no lock, the data file and the segment as they were

    // Space back: the next start takes the file as it was.
    const services = await buildServices(options({ clock: 'real' }));
    expect(services.storage.health()).toEqual({ writable: true });
    await services.storage.close();
  });

  it('removes the journal segment it created', async () => {
    await earlierStart();
    for (const name of readdirSync(dir())) if (name.includes('.wal.')) rmSync(join(dir(), name));
    const before = files();
    const fileSystem = new FaultyFileSystem();
    fileSystem.failing = 'ENOSPC';
    await expect(buildServices(options({ clock: 'real' }), { storeFileSystem: fileSystem })).rejects.toThrow(/^Cannot write the journal .*Free some space and start again\.$/);
    expect(files()).toEqual(before);
  });

  it('is refused by the real clock\'s save only: a manual clock that stands where it stood writes nothing at the start', async () => {
    await earlierStart();
    const fileSystem = new FaultyFileSystem();
    fileSystem.failing = 'ENOSPC';
    const services = await buildServices(options({ clock: 'manual' }), { storeFileSystem: fileSystem });
    expect(fileSystem.failures).toBe(0);
    fileSystem.failing = undefined;
    await services.storage.close();
  });
});

describe('JournaledFile.refuseStart', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const segments = () => readdirSync(dir()).filter((name) => name.includes('.wal.'));

  it('cuts the journal back to where the open found it and gives the lock back; with no write failed, the error is the one given', async () => {
    const crashed = await JournaledFile.open({ path: path() });
    crashed.put('orders', '1', { n: 1 });
    crashed.commit();
    crash(path()); // its line stays in the journal, for the next open to replay
    const [segment] = segments();
    const found = readFileSync(join(dir(), segment!));

    const refused = await JournaledFile.open({ path: path() });
    refused.put('orders', '2', { n: 2 });
    refused.commit();
    expect(statSync(join(dir(), segment!)).size).toBeGreaterThan(found.length);
    const error = new Error('a later step of the start failed');
    expect(await refused.refuseStart(error)).toBe(error);
    expect(readFileSync(join(dir(), segment!))).toEqual(found);
    expect(readdirSync(dir()).sort()).toEqual(['sandbox.json', segment!].sort());

    const next = await JournaledFile.open({ path: path() });
    expect(next.get('orders', '1')).toEqual({ n: 1 });
    expect(next.get('orders', '2')).toBeUndefined();
    await next.close();
  });
});
