import { describe, expect, it } from 'vitest';
import { runReport } from '../../src/client/report.js';

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runReport(argv, (t) => void (stdout += t), (t) => void (stderr += t));
  return { code, stdout, stderr };
}

describe('shipping-sandbox report: its flags', () => {
  it.each([
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--fail-under', 'most'], /--fail-under.*must be a number from 0 to 100/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--fail-under', '101'], /must be a number from 0 to 100/],
    [['--url', 'http://127.0.0.1:9', '--token', 't', '--format', 'pdf'], /--format.*json, junit, html/],
    [['--token', 't'], /--url/],
  ])('exits 2 naming the flag for %j', async (argv, message) => {
    const { code, stderr } = await run(...argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('exits 2 saying why when the sandbox cannot be reached', async () => {
    const { code, stderr } = await run('--url', 'http://127.0.0.1:9', '--token', 't');
    expect(code).toBe(2);
    expect(stderr).toMatch(/^shipping-sandbox report: /);
  });
});
