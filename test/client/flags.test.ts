import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { notAFlag, timeout } from '../../src/client/flags.js';
import { runDeliveries, runListen, runReport, runTrigger } from '../../src/client/index.js';
import { runCli } from '../support/cli.js';

describe('--timeout <duration> of the client commands', () => {
  it.each([
    ['200ms', 200],
    ['30s', 30_000],
    ['0.5s', 500],
    ['2m', 120_000],
    ['1m30s', 90_000],
    [' 10s ', 10_000],
    ['24h', 86_400_000],
  ])('reads %j as %d ms', (value, ms) => {
    expect(timeout(value)).toBe(ms);
  });

  it.each([['0'], ['0s'], ['-1'], ['-5s'], ['abc'], [''], ['10 s'], ['24h1ms'], ['30'], ['2.5']])('refuses %j, as commander shows it naming the flag', (value) => {
    expect(() => timeout(value)).toThrow(InvalidArgumentError);
  });
});

/** A command run in this process as the package exports it: its exit code and what it wrote to stderr. */
async function exported(run: (argv: string[], out: (t: string) => void, err: (t: string) => void) => Promise<number>, argv: string[]) {
  let stderr = '';
  const code = await run(argv, () => undefined, (text) => void (stderr += text));
  return { code, stderr };
}

const URL_FLAG = ['--url', 'http://127.0.0.1:9'];
const never = new AbortController().signal;

describe('a mistyped flag of a client command is named before a required flag it misses', () => {
  it.each([
    ['listen', (argv: string[], out: (t: string) => void, err: (t: string) => void) => runListen(argv, out, err, {}, never), [...URL_FLAG, '--token', 'tok', '--forward_to', 'http://127.0.0.1:9/hooks'], /^error: unknown option '--forward_to'\n\(Did you mean --forward-to\?\)\n$/],
    ['deliveries recover', runDeliveries, ['recover', ...URL_FLAG, '--token', 'tok', '--sinc', '2026-01-01T00:00:00Z'], /^error: unknown option '--sinc'\n\(Did you mean --since\?\)\n$/],
    ['report', runReport, ['--ulr', 'http://127.0.0.1:9', '--token', 'tok'], /^error: unknown option '--ulr'\n\(Did you mean --url\?\)\n$/],
    ['trigger', runTrigger, ['awb.generated', '--ur', 'http://127.0.0.1:9'], /^error: unknown option '--ur'\n\(Did you mean --url\?\)\n$/],
  ])('%s', async (_name, run, argv, message) => {
    expect(await exported(run, argv)).toEqual({ code: 2, stderr: expect.stringMatching(message) });
  });

  it('and a required flag left out is still named', async () => {
    expect(await exported(runReport, ['--token', 'tok'])).toEqual({ code: 2, stderr: "error: required option '--url <url>' not specified\n" });
    expect(await exported(runDeliveries, ['recover', ...URL_FLAG, '--token', 'tok'])).toEqual({ code: 2, stderr: "error: required option '--since <time>' not specified\n" });
  });
});

describe('a flag given no value is named, not the flag that follows it', () => {
  it.each([
    ['--token', runReport, ['--token', ...URL_FLAG], /^error: option '--token <token>' is invalid \(the value is not shown\)\. has no value: what follows it is the next flag\n$/],
    ['--client', runReport, [...URL_FLAG, '--client', '--token', 'tok'], /^error: option '--client <id>' argument '--token' is invalid\. has no value: what follows it is the next flag\n$/],
    ['--order', runTrigger, ['awb.generated', ...URL_FLAG, '--token', 'tok', '--order', '--json'], /^error: option '--order <order_no>' argument '--json' is invalid\. has no value/],
    ['--name', (argv: string[], out: (t: string) => void, err: (t: string) => void) => runListen(argv, out, err, {}, never), [...URL_FLAG, '--forward-to', 'http://127.0.0.1:9/hooks', '--name', '--token', 'tok'], /^error: option '--name <name>' argument '--token' is invalid\. has no value/],
  ])('%s', async (_flag, run, argv, message) => {
    expect(await exported(run, argv)).toEqual({ code: 2, stderr: expect.stringMatching(message) });
  });
});

describe('notAFlag', () => {
  it.each(['--url', '--forward-to', '--to-step', '--url=http://127.0.0.1:4010'])('takes %j for the next flag', (value) => expect(() => notAFlag(value)).toThrow(InvalidArgumentError));
  it.each(['--Tok3n_x', '--a.b', '-url', 'tok--url'])('takes %j for a value (a token may be any visible text)', (value) => expect(() => notAFlag(value)).not.toThrow());
});

describe('the same checks on the command line (shipping-sandbox <command>)', () => {
  it('names a mistyped flag and a flag given no value, exit 2, before any request', async () => {
    const [typo, noValue, missing] = await Promise.all([
      runCli(['listen', ...URL_FLAG, '--token', 'tok', '--forward_to', 'http://127.0.0.1:9/hooks']),
      runCli(['trigger', 'awb.generated', '--token', ...URL_FLAG]),
      runCli(['deliveries', 'recover', ...URL_FLAG, '--token', 'tok']),
    ]);
    expect(typo).toMatchObject({ code: 2, stderr: "error: unknown option '--forward_to'\n(Did you mean --forward-to?)\n" });
    expect(noValue).toMatchObject({ code: 2, stderr: "error: option '--token <token>' is invalid (the value is not shown). has no value: what follows it is the next flag\n" });
    expect(missing).toMatchObject({ code: 2, stderr: "error: required option '--since <time>' not specified\n" });
  }, 30_000);
});
