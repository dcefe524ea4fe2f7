import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url);
const PAGE = readFileSync(new URL('docs/architecture.md', ROOT), 'utf8');

/** The folders whose line on the page names every file at their top (the page says which). */
const LISTED = ['app', 'config', 'client', 'http', 'requests', 'store'];

/** The page's "The folders" block, as the text of each folder's line(s) by its name. */
function folderLines(): Map<string, string> {
  const block = /## The folders\n[\s\S]*?```\n([\s\S]*?)```/.exec(PAGE)![1]!;
  const lines = new Map<string, string>();
  let current = '';
  for (const line of block.split('\n')) {
    const start = /^ {2}([a-z-]+)\/ /.exec(line);
    if (start) current = start[1]!;
    if (current) lines.set(current, `${lines.get(current) ?? ''} ${line}`);
  }
  return lines;
}

describe('docs/architecture.md, the folders', () => {
  it('says which folders name every file', () => {
    expect(PAGE.replace(/\s+/g, ' ')).toContain('The lines of `app/`, `config/`, `client/`, `http/`, `requests/` and `store/` name every file');
  });

  it.each(LISTED)('names every file and folder at the top of src/%s/', (folder) => {
    const line = folderLines().get(folder) ?? '';
    const entries = readdirSync(new URL(`src/${folder}/`, ROOT), { withFileTypes: true })
      .filter((entry) => entry.name !== 'index.ts')
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name));
    expect(entries.filter((name) => !new RegExp(`(?:^|[\\s(,:;])(?:${folder}/)?${name.replaceAll('.', '\\.')}`).test(line))).toEqual([]);
  });
});
