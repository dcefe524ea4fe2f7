import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = 'test/fixtures/links';

/** `npm run lint:links` as package.json has it, on other files than the manual's. */
function checkLinks(...files: string[]): Promise<{ code: number; output: string }> {
  const script: string = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts['lint:links'];
  const [command, ...flags] = script.split(' ').filter((word) => word.startsWith('-') || word === 'remark');
  return new Promise((resolve) => {
    execFile(`node_modules/.bin/${command}`, [...flags, ...files.map((file) => `${FIXTURES}/${file}`)], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, output: stdout + stderr });
    });
  });
}

describe('npm run lint:links (offline: files and headings)', () => {
  it('checks the README and every page of docs/', () => {
    const script: string = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts['lint:links'];
    expect(script.split(' ')).toEqual(expect.arrayContaining(['remark', '--frail', 'README.md', 'docs']));
  });

  it('passes links to pages and headings that exist', async () => {
    const run = await checkLinks('good.md', 'target.md');
    expect(run.output).toBe('');
    expect(run.code).toBe(0);
  });

  it('fails on an anchor whose heading is not there, on the same page or another', async () => {
    const run = await checkLinks('broken-anchor.md', 'target.md');
    expect(run.code).toBe(1);
    expect(run.output).toContain('#what-was-here');
    expect(run.output).toContain('#a-heading-that-was-renamed');
  });

  it('fails on a link to a file that is not there', async () => {
    const run = await checkLinks('broken-file.md', 'target.md');
    expect(run.code).toBe(1);
    expect(run.output).toContain('moved-away.md');
  });
});
