import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { optionsOf, program } from '../../src/config/command.js';
import { OPTIONS, OptionError, resolveOptions } from '../../src/config/index.js';

const cli = (...argv: string[]) => resolveOptions(optionsOf(program().exitOverride().configureOutput({ writeErr: () => {} }).parse(argv, { from: 'user' })));

afterEach(() => vi.unstubAllEnvs());

describe('the options', () => {
  it("are each named in the manual's list of createSandbox options", () => {
    const manual = readFileSync(new URL('../../docs/guides/ci-and-readiness.md', import.meta.url), 'utf8');
    const [from, to] = [manual.indexOf('Options (`SandboxOptions`'), manual.indexOf('An example test, one sandbox per test file')];
    expect(from).toBeGreaterThan(0);
    expect(to).toBeGreaterThan(from);
    const list = manual.slice(from, to);
    expect(Object.keys(OPTIONS).filter((name) => !list.includes(`\`${name}\``))).toEqual([]);
  });

  it('fill in the in-process defaults and read durations into milliseconds once', () => {
    expect(resolveOptions({})).toMatchObject({
      port: 0,
      data: ':memory:',
      logLevel: 'silent',
      awbDelay: { min: 3000, max: 3000 },
      webhookRetries: [0, 5000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000],
      webhookTimeout: 10_000,
      retention: undefined,
      retentionOrders: 0,
      corsOrigins: ['*'],
    });
  });

  it('give the CLI its own defaults for port, data file and log level, and the same for the rest', () => {
    const options = cli();
    expect(options).toMatchObject({ port: 4010, data: './data/sandbox.json', logLevel: 'info' });
    const { port, data, logLevel, providerSpec, ...rest } = options;
    const { port: _p, data: _d, logLevel: _l, providerSpec: _s, ...inProcess } = resolveOptions({});
    expect(rest).toEqual(inProcess);
  });

  it('read flags and environment variables alike, flags first', () => {
    vi.stubEnv('SANDBOX_AWB_DELAY', '2s-10s');
    vi.stubEnv('SANDBOX_RETENTION', '30d');
    vi.stubEnv('SANDBOX_RETENTION_ORDERS', '200000');
    vi.stubEnv('SANDBOX_TOKENS', 'a, b');
    vi.stubEnv('SANDBOX_FSYNC', 'yes');
    vi.stubEnv('SANDBOX_STRICT', '0');
    vi.stubEnv('SANDBOX_HEAP_GROWTH', '300');
    vi.stubEnv('PORT', '5000');
    expect(cli('--port', '6000', '--cors-origins', 'none')).toMatchObject({
      heapGrowth: 300,
      port: 6000,
      awbDelay: { min: 2000, max: 10_000 },
      retention: 30 * 86_400_000,
      retentionOrders: 200_000,
      tokens: ['a', 'b'],
      fsync: true,
      strict: false,
      corsOrigins: [],
    });
  });

  it('take an empty SANDBOX_SEED (a compose variable left unset) or --seed as no seed', () => {
    vi.stubEnv('SANDBOX_SEED', '');
    expect(cli().seed).toBeUndefined();
    vi.stubEnv('SANDBOX_SEED', 'ci');
    expect(cli().seed).toBe('ci');
    expect(cli('--seed', '').seed).toBeUndefined();
  });

  it('read --clock-start as ISO 8601 (a date, or a date and time with its offset) or epoch milliseconds', () => {
    expect(resolveOptions({ clock: 'manual', clockStart: '2026-01-01' }).clockStart).toBe(Date.UTC(2026, 0, 1));
    expect(resolveOptions({ clock: 'manual', clockStart: '2026-01-01T10:00:00+07:00' }).clockStart).toBe(Date.UTC(2026, 0, 1, 3));
    expect(resolveOptions({ clock: 'manual', clockStart: '2026-01-01T10:00:00.250Z' }).clockStart).toBe(Date.UTC(2026, 0, 1, 10, 0, 0, 250));
    expect(cli('--clock', 'manual', '--clock-start', '1767225600000').clockStart).toBe(1_767_225_600_000);
  });

  it('refuse a start of the manual clock with a real clock, and a speed with a manual one, naming the option (the variables too)', () => {
    expect(() => cli('--clock-start', '2026-01-01')).toThrow(expect.objectContaining({ option: 'clockStart', message: expect.stringMatching(/where a manual clock starts, and the clock is real: add --clock manual/) }));
    vi.stubEnv('SANDBOX_SPEED', '10');
    expect(() => cli('--clock', 'manual')).toThrow(expect.objectContaining({ option: 'speed', message: expect.stringMatching(/speed 10 is for a real clock, and the clock is manual/) }));
    expect(cli('--clock', 'real').speed).toBe(10);
    vi.stubEnv('SANDBOX_SPEED', '1');
    expect(cli('--clock', 'manual').speed).toBe(1);
  });

  it('refuse an option name createSandbox does not know (a misspelt tokens), naming it, and take one left undefined', () => {
    expect(() => resolveOptions({ clock: 'manual', tokenz: ['x'] } as never)).toThrow(expect.objectContaining({ option: 'tokenz', message: expect.stringMatching(/^tokenz is not an option of the sandbox; the options are .*\btokens\b/) }));
    expect(resolveOptions({ clock: 'manual', tokenz: undefined } as never).clock).toBe('manual');
  });

  it.each([['fsync', 1], ['strict', 'yes'], ['salvageJournal', 'true']])('refuse a switch %s of %j in-process rather than read it as off', (key, value) => {
    expect(() => resolveOptions({ [key]: value } as never)).toThrow(expect.objectContaining({ option: key, message: `${key} must be true or false, not ${JSON.stringify(value)}.` }));
    expect(resolveOptions({ [key]: true } as never)).toMatchObject({ [key]: true });
  });

  it.each([[Number.NaN], [true], [{ a: 1 }]])('refuse a seed of %j in-process, and take a text or a number', (value) => {
    expect(() => resolveOptions({ seed: value } as never)).toThrow(expect.objectContaining({ option: 'seed', message: expect.stringMatching(/^seed must be a text or a number/) }));
    expect(resolveOptions({ seed: 7 }).seed).toBe('7');
    expect(resolveOptions({ seed: 'ci' }).seed).toBe('ci');
  });

  it('take 0 without a unit in the duration options that allow it, and every duration with one', () => {
    expect(resolveOptions({ awbDelay: '0', webhookRetries: '0', databaseWait: '0' })).toMatchObject({ awbDelay: { min: 0, max: 0 }, webhookRetries: [0], databaseWait: 0 });
    expect(resolveOptions({ awbDelay: '2s-10s', webhookRetries: '0,5s,1.5m', webhookTimeout: '500ms', jobLease: '2m' })).toMatchObject({ awbDelay: { min: 2_000, max: 10_000 }, webhookRetries: [0, 5_000, 90_000], webhookTimeout: 500, jobLease: 120_000 });
  });

  it('add up repeated --token flags', () => {
    expect(cli('--token', 't1', '--token', 't2,t3').tokens).toEqual(['t1', 't2', 't3']);
  });

  it.each([
    [{ awbDelay: 'soon' }, 'awbDelay', /awbDelay "soon" is not a delay/],
    [{ webhookRetries: '0,later' }, 'webhookRetries', /is not a retry schedule/],
    [{ webhookTimeout: '0' }, 'webhookTimeout', /is not a duration above 0/],
    // A bare number would be milliseconds: a unit is required, so `--webhook-timeout 10` does not time out every attempt.
    [{ webhookTimeout: '10' }, 'webhookTimeout', /webhookTimeout "10" has a number without a unit \(10\): write for example 10s or 500ms/],
    [{ webhookRetries: '0,5,30' }, 'webhookRetries', /webhookRetries "0,5,30" has a number without a unit \(5\)/],
    [{ awbDelay: '5' }, 'awbDelay', /awbDelay "5" has a number without a unit/],
    [{ awbDelay: '2s-10' }, 'awbDelay', /awbDelay "2s-10" has a number without a unit \(10\)/],
    [{ jobLease: '90' }, 'jobLease', /jobLease "90" has a number without a unit/],
    [{ listenerExpiry: '24' }, 'listenerExpiry', /listenerExpiry "24" has a number without a unit/],
    [{ databaseWait: '30' }, 'databaseWait', /databaseWait "30" has a number without a unit/],
    [{ clockStart: 'yesterday' }, 'clockStart', /is not a time/],
    [{ clockStart: '-1' }, 'clockStart', /is not a time/],
    [{ clockStart: '2026-02-30T00:00:00Z' }, 'clockStart', /is not a time/],
    [{ clockStart: '2026-01-01T25:00:00Z' }, 'clockStart', /is not a time/],
    [{ clockStart: '9899-12-31' }, 'clockStart', /is after 9899-\S+Z, the latest start the manual clock takes/],
    [{ clockStart: '2026-01-01T10:00:00' }, 'clockStart', /ISO 8601 with its offset/],
    [{ clockStart: '1700000000' }, 'clockStart', /is 1970-01-20T16:13:20.000Z in epoch milliseconds: for epoch seconds multiply by 1000/],
    [{ clockStart: '1960-01-01T00:00:00Z' }, 'clockStart', /"1960-01-01T00:00:00Z" is before 1973-03-03T09:46:40.000Z, the earliest start the manual clock takes/],
    [{ clockStart: '0050-01-01' }, 'clockStart', /"0050-01-01" is before 1973-03-03T09:46:40.000Z/],
    [{ speed: 0 }, 'speed', /positive number/],
    [{ port: 70_000 }, 'port', /from 0 to 65535/],
    [{ maxItems: 1.5 }, 'maxItems', /whole number/],
    [{ retentionOrders: -1 }, 'retentionOrders', /whole number from 0/],
    [{ retention: '200000' }, 'retention', /has no unit: use for example 30d.*--retention-orders/],
    [{ heapGrowth: 5 }, 'heapGrowth', /from 10 to 400/],
    [{ heapGrowth: 1000 }, 'heapGrowth', /from 10 to 400/],
    [{ logLevel: 'loud' }, 'logLevel', /is not a level/],
    [{ webhookSecret: 'hunter2' }, 'webhookSecret', /whsec_/],
    [{ bodyLimit: 'huge' }, 'bodyLimit', /is not a size from 1kb to 100mb/],
    [{ bodyLimit: '10gb' }, 'bodyLimit', /is not a size from 1kb to 100mb/],
    [{ bodyLimit: '-1kb' }, 'bodyLimit', /is not a size from 1kb to 100mb/],
    [{ databaseUrl: 'mysql://db/sandbox' }, 'databaseUrl', /postgres:\/\/ or postgresql:\/\//],
    [{ corsOrigins: ['foo'] as string[] }, 'corsOrigins', /corsOrigins "foo" is not an origin/],
    [{ corsOrigins: ['https://tools.example.com/app'] as string[] }, 'corsOrigins', /is not an origin.*no path/],
    [{ corsOrigins: ['ftp://files.example.com'] as string[] }, 'corsOrigins', /is not an origin/],
    // Every delivery would fail and be retried for hours; credentials would be printed in the banner and sent to the receiver.
    [{ webhookUrl: 'notaurl' }, 'webhookUrl', /webhookUrl is not an absolute http\(s\) URL/],
    [{ webhookUrl: 'ftp://x.test/' }, 'webhookUrl', /webhookUrl is not an absolute http\(s\) URL/],
    // The scheme forgotten: what reads as one is a user name, not to be shown.
    [{ webhookUrl: 'alice:hunter2@hooks.test/x' }, 'webhookUrl', /^webhookUrl is not an absolute http\(s\) URL\.$/],
    [{ webhookUrl: 'http://user:pw@127.0.0.1:1/h' }, 'webhookUrl', /webhookUrl carries credentials/],
    // A token a client cannot send as "Bearer <token>" would never authenticate.
    [{ tokens: ['a b'] as string[] }, 'tokens', /visible text without spaces/],
    [{ tokens: ['令牌'] as string[] }, 'tokens', /in characters of one byte/],
    [{ adminTokens: ['admin\ttoken'] as string[] }, 'adminTokens', /visible text without spaces/],
  ] as const)('refuses %j in-process with an error naming %s', (input, option, message) => {
    const error = (() => {
      try {
        resolveOptions(input);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OptionError);
    expect(error).toMatchObject({ option, message: expect.stringMatching(message) });
  });

  it("takes the operator's webhook URL as written, a host the API would refuse as guessed included (the operator's URLs are trusted)", () => {
    for (const webhookUrl of ['http:///127.0.0.1:3000/hooks', 'http://%41.test/hooks']) expect(resolveOptions({ webhookUrl }).webhookUrl).toBe(webhookUrl);
  });

  it('refuses the same values on the command line, naming the flag', () => {
    expect(() => cli('--awb-delay', 'soon')).toThrow(/--awb-delay <delay>.*awbDelay "soon" is not a delay/);
    expect(() => cli('--max-items', 'many')).toThrow(/--max-items <n>.*whole number/);
    // A sign is no whole number's text: the message gives the range, as it does past it.
    expect(() => cli('--port', '-1')).toThrow(/--port <port>.*port must be a whole number from 0 to 65535, not "-1"\./);
    expect(() => cli('--max-items', '-3')).toThrow(/--max-items <n>.*maxItems must be a whole number from 1 to \d+, not "-3"\./);
    expect(() => cli('--body-limit', 'lots')).toThrow(/--body-limit <size>.*bodyLimit "lots" is not a size/);
    expect(cli('--body-limit', '500kb').bodyLimit).toBe('500kb');
    expect(() => cli('--heap-growth', 'lots')).toThrow(/--heap-growth <percent>.*whole number/);
    expect(cli('--heap-growth', '150').heapGrowth).toBe(150);
    expect(cli().heapGrowth).toBe(75);
    expect(() => cli('--cors-origins', 'localhost:3000')).toThrow(/--cors-origins <origins>.*is not an origin/);
    expect(cli('--cors-origins', 'http://localhost:3000, https://Tools.example.com/').corsOrigins).toEqual(['http://localhost:3000', 'https://Tools.example.com/']);
    expect(cli('--cors-origins', 'none').corsOrigins).toEqual([]);
  });

  it('names the flag of a refused secret (a token, a webhook or database URL) without showing the value, from a flag or a variable', () => {
    const refusal = (run: () => unknown): Error => {
      try {
        run();
      } catch (error) {
        return error as Error;
      }
      throw new Error('not refused');
    };
    for (const error of [refusal(() => cli('--token', 'my secret')), refusal(() => cli('--webhook-url', 'http://alice:s3cret@hooks.test/x'))]) {
      expect(error).toBeInstanceOf(OptionError);
      expect(error.message).not.toMatch(/my secret|s3cret/);
    }
    vi.stubEnv('SANDBOX_TOKENS', 'ok-token,my secret');
    const fromEnv = refusal(() => cli());
    expect(fromEnv).toMatchObject({ option: 'tokens' });
    expect(fromEnv.message).not.toMatch(/ok-token|my secret/);
  });

  it('refuses a switch variable that is neither on nor off, naming it, rather than leaving it off', () => {
    vi.stubEnv('SANDBOX_FSYNC', 'ture');
    expect(() => cli()).toThrow(/SANDBOX_FSYNC "ture" is neither on nor off/);
    vi.stubEnv('SANDBOX_FSYNC', 'off');
    vi.stubEnv('SANDBOX_STRICT', 'On');
    expect(cli()).toMatchObject({ fsync: false, strict: true });
    vi.stubEnv('SANDBOX_STRICT', '');
    expect(cli('--strict').strict).toBe(true);
    expect(cli().strict).toBe(false);
  });

  it('offer every option but the in-process client list as a flag with a variable', () => {
    const missing = Object.entries(OPTIONS).filter(([, spec]) => spec.flag === undefined || spec.env === undefined).map(([key]) => key);
    expect(missing).toEqual(['clients']);
    const help = program().helpInformation();
    for (const spec of Object.values(OPTIONS)) if (spec.flag) expect(help).toContain(spec.flag);
  });
});
