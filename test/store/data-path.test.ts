import { existsSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataFilePath, realDataPath } from '../../src/store/embedded/file/data-path.js';
import { DataFileError } from '../../src/store/embedded/file/types.js';
import { tempDir } from '../support/tmp.js';

describe('dataFilePath', () => {
  const dir = tempDir();

  it.each([
    ['a plain file', (d: string) => writeFileSync(join(d, 'real.json'), '{}'), 'real.json', 'real.json'],
    ['a symbolic link to a file', (d: string) => (writeFileSync(join(d, 'real.json'), '{}'), symlinkSync('real.json', join(d, 'link.json'))), 'link.json', 'real.json'],
    ['a chain of two links', (d: string) => (symlinkSync('b.json', join(d, 'a.json')), symlinkSync(join(d, 'real.json'), join(d, 'b.json'))), 'a.json', 'real.json'],
    ['a file in a linked folder', (d: string) => (mkdirSync(join(d, 'store')), symlinkSync('store', join(d, 'data'))), 'data/s.json', 'store/s.json'],
  ])('follows %s to the real path', (_case, make, given, real) => {
    make(dir());
    expect(dataFilePath(join(dir(), given))).toBe(join(dir(), real));
    expect(realDataPath(join(dir(), given))).toBe(join(dir(), real));
  });

  it('creates missing folders, and refuses a folder that cannot be made rather than trying for ever (under /proc, below a dangling link)', () => {
    const d = dir();
    expect(dataFilePath(join(d, 'a', 'b', 's.json'))).toBe(join(d, 'a', 'b', 's.json'));
    expect(existsSync(join(d, 'a', 'b'))).toBe(true);
    symlinkSync(join(d, 'unmounted'), join(d, 'volume'));
    expect(() => dataFilePath(join(d, 'volume', 'data', 's.json'))).toThrow(/ENOENT/);
    writeFileSync(join(d, 'file'), '');
    expect(() => dataFilePath(join(d, 'file', 'data', 's.json'))).toThrow(/ENOTDIR|EEXIST/);
    if (existsSync('/proc/self')) expect(() => dataFilePath('/proc/no-such-folder/s.json')).toThrow(/ENOENT/);
  });

  it('reads a relative link in a folder reached through a link from the real folder, as the kernel does (a deploy layout)', () => {
    const d = dir();
    mkdirSync(join(d, 'cap', 'releases', 'v1', 'data'), { recursive: true });
    mkdirSync(join(d, 'cap', 'shared'));
    writeFileSync(join(d, 'cap', 'shared', 'sandbox.json'), '{}');
    symlinkSync('../../../shared/sandbox.json', join(d, 'cap', 'releases', 'v1', 'data', 'sandbox.json'));
    symlinkSync('releases/v1', join(d, 'cap', 'current'));
    expect(dataFilePath(join(d, 'cap', 'current', 'data', 'sandbox.json'))).toBe(join(d, 'cap', 'shared', 'sandbox.json'));
    expect(existsSync(join(d, 'shared'))).toBe(false);
  });

  it.each(['link.json.wal.2', 'link.json.lock'])('refuses a start through a link while %s, kept there by an earlier version, sits beside it', (left) => {
    const d = dir();
    writeFileSync(join(d, 'real.json'), '{}');
    symlinkSync('real.json', join(d, 'link.json'));
    writeFileSync(join(d, left), '');
    expect(() => dataFilePath(join(d, 'link.json'))).toThrow(new RegExp(`reached through the link .*link\\.json, and .*${left.replace(/\./g, '\\.')} sit beside the link`));
    expect(dataFilePath(join(d, 'real.json'))).toBe(join(d, 'real.json'));
  });

  it('creates the folder of a link to a file not made yet, and leaves the link', () => {
    symlinkSync('later/real.json', join(dir(), 'link.json'));
    expect(dataFilePath(join(dir(), 'link.json'))).toBe(join(dir(), 'later', 'real.json'));
    expect(existsSync(join(dir(), 'later'))).toBe(true);
  });

  it('refuses a loop of symbolic links and a file with another hard link', () => {
    symlinkSync('b.json', join(dir(), 'a.json'));
    symlinkSync('a.json', join(dir(), 'b.json'));
    expect(() => dataFilePath(join(dir(), 'a.json'))).toThrow(/is a loop of symbolic links/);
    writeFileSync(join(dir(), 's.json'), '{}');
    linkSync(join(dir(), 's.json'), join(dir(), 'hard.json'));
    expect(() => dataFilePath(join(dir(), 's.json'))).toThrow(DataFileError);
    expect(() => dataFilePath(join(dir(), 's.json'))).toThrow(`The data file ${join(dir(), 's.json')} has 2 hard links`);
  });
});
