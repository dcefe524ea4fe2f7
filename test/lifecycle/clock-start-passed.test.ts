import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
import { tempDir } from '../support/tmp.js';

const dir = tempDir();
const TOKEN = 'clock-start-passed-token';
const DAY = 86_400_000;

let cli: RunningCli | undefined;
afterEach(async () => {
  await cli?.stop();
  cli = undefined;
});

/** Starts the CLI and waits for its `started` log line: the start's other lines, written before it to the same log, are in by then (the banner may come first). */
const start = async (data: string, clockStart: string): Promise<RunningCli> => {
  cli = await startCli(['--port', '0', '--data', data, '--clock', 'manual', '--clock-start', clockStart, '--token', TOKEN]);
  await cli.printed('"msg":"started"');
  return cli;
};
const call = async (c: RunningCli, method: string, path: string, body?: unknown) =>
  (await fetch(`${c.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json();
/** The start's warnings about --clock-start, as JSON log lines. */
const passedLines = (c: RunningCli) => c.output().split('\n').filter((line) => line.includes('later than --clock-start')).map((line) => JSON.parse(line));

describe('--clock-start on a store whose manual clock already stands later', () => {
  it('says at start that the clock resumes where the store kept it (a clock never moves back), and says nothing when the flag applies', async () => {
    const data = join(dir(), 'clock.json');
    const first = await start(data, '2026-01-01T00:00:00Z');
    expect(passedLines(first)).toEqual([]);
    // The banner says where a manual clock stands.
    expect(first.output()).toContain('\n  clock:  manual, at 2026-01-01T00:00:00.000Z\n');
    const clientId: string = (await call(first, 'GET', '/__sandbox/whoami')).client.id;
    expect((await call(first, 'POST', '/__sandbox/clock/advance', { ms: DAY })).now).toBe('2026-01-02T00:00:00.000Z');
    await first.stop();

    const second = await start(data, '2026-01-01T00:00:00Z');
    expect((await call(second, 'GET', '/__sandbox/clock')).now).toBe('2026-01-02T00:00:00.000Z');
    expect(passedLines(second)).toEqual([
      expect.objectContaining({
        level: 30,
        clock_start: '2026-01-01T00:00:00.000Z',
        clients: [clientId],
        clients_total: 1,
        msg: `the clock of client ${clientId} resumes at 2026-01-02T00:00:00.000Z, where the store kept it: later than --clock-start 2026-01-01T00:00:00.000Z, which moves no clock back (a new data file, or a new database, starts at it; GET /__sandbox/clock shows a client's)`,
      }),
    ]);
    await second.stop();

    // A --clock-start later than the kept clock moves it on: nothing to say.
    const third = await start(data, '2026-02-01T00:00:00Z');
    expect((await call(third, 'GET', '/__sandbox/clock')).now).toBe('2026-02-01T00:00:00.000Z');
    expect(passedLines(third)).toEqual([]);
  });
});
