import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import type { JournalSalvage } from '../../src/store/embedded/file/journal.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

/**
 * A journal segment older than the newest was closed whole before the next began: one cut
 * short or missing lost acknowledged commits. The start says so and touches nothing, unless
 * told to salvage what is intact.
 */
describe('a damaged older journal segment', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const segments = () =>
    readdirSync(dir())
      .filter((name) => /\.wal\.\d+$/.test(name))
      .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
      .map((name) => join(dir(), name));
  /**
   * The data file and every journal segment with the SHA-256 of its bytes. The lock file is
   * not among them: the crashed holder's stale lock is taken over and let go by the refused start.
   */
  const files = () =>
    Object.fromEntries(
      readdirSync(dir())
        .filter((name) => !name.endsWith('.lock'))
        .map((name) => [name, createHash('sha256').update(readFileSync(join(dir(), name))).digest('hex')]),
    );

  /** 100 acknowledged commits (one order each) over several segments, then a crash. */
  async function journalOfSegments(): Promise<string[]> {
    const store = await JournaledFile.open({ path: path(), segmentBytes: 2_000, checkpointBytes: 10 ** 9 });
    for (let n = 0; n < 100; n += 1) {
      store.put('orders', String(n), { n, padding: 'x'.repeat(80) });
      store.commit();
    }
    crash(path());
    const all = segments();
    expect(all.length).toBeGreaterThan(3);
    return all;
  }

  /** Cuts a segment in the middle of a line; answers how many complete lines stay before the cut. */
  function cutMidLine(segment: string): number {
    const bytes = readFileSync(segment);
    let at = Math.floor(bytes.length / 2);
    while (bytes[at - 1] === 0x0a) at -= 1;
    truncateSync(segment, at);
    return bytes.subarray(0, at).toString('utf8').split('\n').length - 1;
  }

  it('cut short stops the start naming the segment, every file byte-identical', async () => {
    const [first] = await journalOfSegments();
    cutMidLine(first!);
    const before = files();
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(`The journal ${first} ends in a line cut short`);
    expect(files()).toEqual(before);
  });

  it('missing stops the start naming the missing segment, every file byte-identical', async () => {
    const all = await journalOfSegments();
    rmSync(all[1]!);
    const before = files();
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(`The journal ${all[1]} is missing, while`);
    expect(files()).toEqual(before);
  });

  it('with a line that is not a commit stops the start naming segment and line, and points to --salvage-journal', async () => {
    const [first] = await journalOfSegments();
    const lines = readFileSync(first!, 'utf8').split('\n');
    lines[2] = '{"not": "a commit"';
    writeFileSync(first!, lines.join('\n'));
    const before = files();
    const start = JournaledFile.open({ path: path() });
    await expect(start).rejects.toThrow(`The journal ${first} is damaged at line 3`);
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow('--salvage-journal');
    expect(files()).toEqual(before);
  });

  it('the newest segment may still end in a torn line: dropped, as a write never acknowledged, and the start says how many bytes', async () => {
    const all = await journalOfSegments();
    const newest = all.at(-1)!;
    const kept = cutMidLine(newest);
    const cutSize = statSync(newest).size;
    const torn: unknown[] = [];
    const store = await JournaledFile.open({ path: path(), onTornTail: (tail) => torn.push(tail) });
    const lost = readFileSync(all.at(-1)!, 'utf8').split('\n').length - 1 - kept;
    expect(lost).toBe(0);
    expect(torn).toEqual([{ path: newest, end: statSync(newest).size, size: cutSize }]);
    expect(statSync(newest).size).toBeLessThan(cutSize);
    expect(store.count('orders')).toBeLessThan(100);
    expect(store.count('orders')).toBeGreaterThan(90);
    await store.close();
  });

  it('with salvageJournal, a start refused after the replay still leaves every file where it was', async () => {
    const all = await journalOfSegments();
    cutMidLine(all[1]!);
    const before = files();
    const refusing = () => {
      throw new Error('the owner refuses these records');
    };
    await expect(JournaledFile.open({ path: path(), salvageJournal: true, onLoad: refusing })).rejects.toThrow('the owner refuses these records');
    expect(files()).toEqual(before);
  });

  it('with salvageJournal starts from what is intact, sets the rest aside in a dated folder and says what', async () => {
    const all = await journalOfSegments();
    const inFirst = readFileSync(all[0]!, 'utf8').split('\n').length - 1;
    const kept = cutMidLine(all[1]!);
    const told: JournalSalvage[] = [];
    const store = await JournaledFile.open({ path: path(), salvageJournal: true, onSalvage: (salvage) => told.push(salvage) });
    expect(store.count('orders')).toBe(inFirst + kept);

    expect(told).toHaveLength(1);
    const [salvage] = told;
    expect(salvage!.damage).toMatch(/^sandbox\.json\.wal\.\d+ ends in a line cut short/);
    // The lines before the cut were replayed: what is lost starts after them.
    expect(salvage!.fromLine).toBe(kept + 1);
    expect(salvage!.moved).toEqual(all.slice(1).map((segment) => segment.split('/').pop()));
    expect(salvage!.folder).toMatch(/sandbox\.json\.damaged-\d{4}-\d\d-\d\dT/);
    expect(readdirSync(salvage!.folder).sort()).toEqual([...salvage!.moved].sort());
    for (const moved of salvage!.moved) expect(statSync(join(salvage!.folder, moved)).size).toBeGreaterThan(0);
    for (const segment of all.slice(1)) expect(existsSync(segment) && statSync(segment).size > 0 && readFileSync(segment, 'utf8').includes('"n":99')).toBe(false);

    // What was kept is durable at once (a checkpoint holds it): a crash, then a plain start, finds the same records.
    crash(path());
    const again = await JournaledFile.open({ path: path() });
    expect(again.count('orders')).toBe(inFirst + kept);
    again.put('orders', 'after', { n: 'after' });
    again.commit();
    await again.close();
    const last = await JournaledFile.open({ path: path() });
    expect(last.count('orders')).toBe(inFirst + kept + 1);
    await last.close();
  });
});
