import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The README's quick start: the first `sh` block that creates an order from examples/order.json. */
function quickStartSteps(): string {
  const block = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('-d @examples/order.json'));
  if (!block) throw new Error('README has no quick-start block creating an order from examples/order.json');
  return block;
}

describe('README quick start, run as written', () => {
  let cli: RunningCli;
  let output: string;
  let seconds: number;
  beforeAll(async () => {
    // What `npm start` runs (default clock, AWB delay and scenario), on a free port and no data file.
    cli = await startCli(['--port', '0', '--data', ':memory:']);
    const token = /token:\s+(\S+)/.exec(cli.output())![1]!;
    const script = quickStartSteps()
      .replaceAll('http://127.0.0.1:4010', cli.url)
      .replace(/^TOKEN=.*$/m, `TOKEN=${token}`);
    const started = Date.now();
    output = (await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, timeout: 60_000 })).stdout;
    seconds = (Date.now() - started) / 1000;
  }, 90_000);
  afterAll(() => cli?.stop());

  it('sets only TOKEN by hand: every other value comes from the answers', () => {
    expect(quickStartSteps().match(/^[A-Z]+=[^$]/gm)).toEqual(['TOKEN=s']);
  });

  it('creates an order and learns its AWB', () => {
    expect(output).toMatch(/^order [0-9]+$/m);
    expect(output).toMatch(/^AWB JN[0-9]{10}$/m);
  });

  it("prints the sandbox's message, not a stack trace, when a step is refused (the placeholder token pasted as it is)", async () => {
    const script = quickStartSteps().replaceAll('http://127.0.0.1:4010', cli.url);
    // As an interactive shell runs it: a failed step does not stop the next.
    const { stdout, stderr } = await promisify(execFile)('bash', ['-c', script], { cwd: ROOT, timeout: 60_000 });
    expect(stderr).toMatch(/^Unknown token: use one of the tokens the sandbox printed at start/m);
    expect(stderr).not.toMatch(/TypeError|SyntaxError|at Object|node:internal/);
    expect(stdout).toMatch(/^order $/m);
  });

  it("tracks that order's AWB within a minute, from its pick-up scan", () => {
    const tracking = JSON.parse(output.trim().split('\n').at(-1)!);
    expect(tracking.last_status).toBe('1');
    expect(tracking.history).toHaveLength(1);
    expect(seconds).toBeLessThan(60);
  });
});
