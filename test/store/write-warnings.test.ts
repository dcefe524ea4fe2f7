import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../../src/store/open.js';
import { writeWarnings } from '../../src/store/embedded/file/write-warnings.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { tempDir } from '../support/tmp.js';

/** A logger whose lines are kept, parsed. */
function capturedLogger() {
  const lines: Array<{ level: number; msg: string; code?: string; failures_unlogged?: number }> = [];
  return { lines, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) };
}

const fault = (code: string) => Object.assign(new Error(`${code}: injected, write`), { code });
const WARN = 40;
const INFO = 30;

describe('writeWarnings', () => {
  it('logs one warning per error code per minute while journal writes fail, and one info line when they succeed again', () => {
    const { lines, logger } = capturedLogger();
    let now = 1_000_000;
    const { onWriteFailed, onWriteResumed } = writeWarnings(logger, () => now);
    for (let i = 0; i < 5; i++) onWriteFailed(fault('ENOSPC'));
    onWriteFailed(fault('EIO'));
    expect(lines.map((l) => [l.level, l.code])).toEqual([
      [WARN, 'ENOSPC'],
      [WARN, 'EIO'],
    ]);
    expect(lines[0]!.msg).toMatch(/the data file cannot be written \(ENOSPC\): the store is degraded/);
    onWriteResumed();
    onWriteResumed();
    expect(lines.slice(2).map((l) => [l.level, l.msg])).toEqual([[INFO, 'the data file takes writes again: the store is no longer degraded']]);

    // A disk that flaps within the minute: its warnings are held back, and so is the info line that would follow none.
    onWriteFailed(fault('ENOSPC'));
    onWriteResumed();
    expect(lines).toHaveLength(3);
    now += 60_000;
    onWriteFailed(fault('ENOSPC'));
    expect(lines[3]).toMatchObject({ level: WARN, code: 'ENOSPC', failures_unlogged: 5 });
  });
});

describe('the embedded store on a failing disk (openStorage)', () => {
  const dir = tempDir();

  it('logs the failed journal write as a warning, and that the store is writable again', async () => {
    const { lines, logger } = capturedLogger();
    const fileSystem = new FaultyFileSystem();
    const storage = await openStorage({ data: join(dir(), 'sandbox.json'), fsync: false, journalSize: 10, databaseUrl: undefined }, logger, fileSystem);
    fileSystem.failing = 'ENOSPC';
    await expect(storage.counters.next('order')).rejects.toThrow(/ENOSPC/);
    await expect(storage.counters.next('order')).rejects.toThrow(/ENOSPC/);
    fileSystem.failing = undefined;
    expect(await storage.counters.next('order')).toBe(1);
    await storage.close();
    expect(lines.map((l) => [l.level, l.code])).toEqual([
      [WARN, 'ENOSPC'],
      [INFO, undefined],
    ]);
  });
});
