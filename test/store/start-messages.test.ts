import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { tempDir } from '../support/tmp.js';

/** A start refused for what stands on disk says what stands there and what to do, naming the file. */
describe('start-up messages name the file and the way forward', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');

  it('a directory where the data file should be: says so, not that it has hard links', async () => {
    mkdirSync(path());
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(
      `The data file ${path()} is a directory: --data names the file itself (for example --data ${join(path(), 'sandbox.json')}). It was left untouched.`,
    );
  });

  it('a folder that cannot be made (under a file, under /proc): names --data and the way forward, not a bare ENOTDIR', async () => {
    const file = path();
    await JournaledFile.open({ path: file }).then((opened) => opened.close());
    const under = join(file, 'x.json');
    await expect(JournaledFile.open({ path: under })).rejects.toThrow(
      new RegExp(`^The data file ${under.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(--data\\) cannot be kept there: no folder can be made for it \\(ENOTDIR: .*\\)\\. Give --data \\(SANDBOX_DATA\\) a file in a folder that exists or can be made`),
    );
    await expect(JournaledFile.open({ path: '/proc/no-such-folder/sandbox.json' })).rejects.toThrow('(--data) cannot be kept there: no folder can be made for it (ENOENT');
  });

  it('a directory where the lock should be: names the lock file, not a bare EISDIR', async () => {
    mkdirSync(`${path()}.lock`);
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(
      `Cannot read the lock file ${path()}.lock (EISDIR: illegal operation on a directory, read). A directory stands where the sandbox keeps a file: move it away.`,
    );
  });

  it('a journal segment that cannot be read: names the segment', async () => {
    const store = await JournaledFile.open({ path: path() });
    store.put('orders', '1', { v: 1 });
    store.commit();
    await store.close();
    const [segment] = readdirSync(dir()).filter((name) => /\.wal\.\d+$/.test(name));
    const unreadable = join(dir(), segment!.replace(/\d+$/, (n) => String(Number(n) + 1)));
    mkdirSync(unreadable); // as root a mode 000 file is still readable; a directory is not, for anyone
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(`Cannot read the journal ${unreadable} (EISDIR`);
  });

  it('a folder it may not write: says whose access is missing, not "free some space"', async () => {
    const fileSystem = new FaultyFileSystem();
    fileSystem.failing = 'EACCES';
    const error = (await JournaledFile.open({ path: path(), fileSystem }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(new RegExp(`^Cannot write the new data file ${path()} \\(EACCES`));
    expect(error.message).toContain(`may not read or write there: give it access to ${dirname(path())} (its files and the folder), or start with another --data.`);
    expect(error.message).not.toMatch(/free some space/i);
  });

  it('a full disk still says to free some space', async () => {
    const fileSystem = new FaultyFileSystem();
    fileSystem.failing = 'ENOSPC';
    await expect(JournaledFile.open({ path: path(), fileSystem })).rejects.toThrow(/\(ENOSPC.*Free some space and start again\.$/);
  });
});
