import { parse as parseBytes } from 'bytes';
import { LATEST_CLOCK_START_MS } from '../clock/index.js';
import { domainMessages, isUsableToken, parseDelayRange, parseDuration } from '../shared/index.js';
import { PROVIDER_SPEC } from '../spec/index.js';
import { checkConfiguredUrl, DEFAULT_RETRIES, isSecret, parseRetries, parseTargetPolicy } from '../webhooks/index.js';
import type { Schema } from './option-spec.js';
import { as, duration, fail, instant, isOrigin, list, optionalText, text, unitRequired, wholeNumber } from './parsers.js';

/** The earliest --clock-start (1973-03-03T09:46:40Z, 1e11 ms): below it a number was most likely meant as epoch seconds. */
const EARLIEST_CLOCK_START_MS = 1e11;

/** Why a token is refused (not shown: it is a secret). */
const UNUSABLE_TOKEN = 'a token must be visible text without spaces, in characters of one byte (ASCII is safest; a client sends it as "Authorization: Bearer <token>"): this one would never authenticate.';

/** A repeatable, secret list of tokens: each non-empty and one a client can send (see UNUSABLE_TOKEN). */
const tokenList = (name: 'tokens' | 'adminTokens', what: string) => ({
  default: [] as string[],
  repeatable: true as const,
  secret: true as const,
  fromText: (text: string) => {
    const tokens = list(text);
    return tokens.length > 0 ? tokens : fail(name, `${what} must be a non-empty text.`);
  },
  resolve: (value: unknown): string[] => {
    if (!(Array.isArray(value) && value.every((t) => typeof t === 'string' && t !== ''))) return fail(name, `${name} must be a list of non-empty texts.`);
    return value.every(isUsableToken) ? value : fail(name, UNUSABLE_TOKEN);
  },
});

/** A switch: true or false (in-process, 1 or 'yes' would be read as off without a word). */
const switchOf = (key: 'strict' | 'fsync' | 'salvageJournal') => (value: unknown): boolean =>
  typeof value === 'boolean' ? value : fail(key, `${key} must be true or false, not ${JSON.stringify(value)}.`);

/** The pino levels `logLevel` accepts. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Every option, once: the CLI's flags and variables, `createSandbox()` and the defaults
 * are all read from here.
 */
export const OPTIONS: Schema = {
  port: { flag: '--port <port>', env: 'PORT', help: 'port to listen on, 0 for any free port', default: 0, cliDefault: 4010, ...wholeNumber('port', 0, 65535) },
  host: { flag: '--host <host>', env: 'HOST', help: 'interface to listen on', default: '127.0.0.1', resolve: text('host') },
  data: { flag: '--data <file>', env: 'SANDBOX_DATA', help: 'data file, or :memory: to keep nothing', default: ':memory:', cliDefault: './data/sandbox.json', resolve: text('data') },
  tokens: { flag: '--token <token>', env: 'SANDBOX_TOKENS', help: 'a client token (repeatable; the variable is comma-separated)', ...tokenList('tokens', 'a token') },
  adminTokens: {
    flag: '--admin-token <token>',
    env: 'SANDBOX_ADMIN_TOKEN',
    help: 'an admin token: acts for any client with X-Sandbox-Client, does the sandbox-wide operations (repeatable; the variable is comma-separated)',
    ...tokenList('adminTokens', 'an admin token'),
  },
  webhookUrl: {
    flag: '--webhook-url <url>',
    env: 'SANDBOX_WEBHOOK_URL',
    help: 'default webhook URL of every client',
    default: undefined,
    secret: true,
    resolve: (value) => {
      const url = optionalText('webhookUrl')(value);
      const refusal = url === undefined ? undefined : checkConfiguredUrl(url);
      // The URL is not shown: one with credentials would print them.
      return refusal ? fail('webhookUrl', `webhookUrl ${refusal.message}.`) : url;
    },
  },
  webhookSecret: {
    flag: '--webhook-secret <secret>',
    env: 'SANDBOX_WEBHOOK_SECRET',
    help: 'default webhook secret (whsec_...); generated when absent',
    default: undefined,
    secret: true,
    resolve: (value) => (value === undefined || isSecret(value) ? value : fail('webhookSecret', `webhookSecret ${domainMessages.webhookSecret}.`)),
  },
  webhookRetries: {
    flag: '--webhook-retries <delays>',
    env: 'SANDBOX_WEBHOOK_RETRIES',
    help: 'webhook retry schedule, one delay per attempt',
    default: DEFAULT_RETRIES,
    resolve: (value) => (unitRequired('webhookRetries', value, '0,5s,30s,2m'), typeof value === 'string' ? parseRetries(value) : undefined) ?? fail('webhookRetries', `webhookRetries "${String(value)}" is not a retry schedule: use delays such as 0,5s,30s,2m.`),
  },
  webhookTimeout: {
    flag: '--webhook-timeout <duration>',
    env: 'SANDBOX_WEBHOOK_TIMEOUT',
    help: 'how long a webhook attempt may take',
    default: '10s',
    resolve: (value) => {
      const ms = duration('webhookTimeout', '10s or 500ms')(value);
      return ms <= 3_600_000 ? ms : fail('webhookTimeout', `webhookTimeout "${String(value)}" is longer than an hour, the most an attempt may take.`);
    },
  },
  webhookTargets: {
    flag: '--webhook-targets <policy>',
    env: 'SANDBOX_WEBHOOK_TARGETS',
    help: 'where webhook URLs set through the API may point: any, public, or a list of hosts and CIDRs (may include public)',
    default: 'any',
    resolve: (value) => {
      try {
        return parseTargetPolicy(String(value));
      } catch (error) {
        return fail('webhookTargets', (error as Error).message);
      }
    },
  },
  awbDelay: {
    flag: '--awb-delay <delay>',
    env: 'SANDBOX_AWB_DELAY',
    help: 'delay from create to AWB: 0, 500ms, 3s or a range 2s-10s',
    default: '3s',
    resolve: (value) => (unitRequired('awbDelay', value, '500ms, 3s or 2s-10s'), typeof value === 'string' ? parseDelayRange(value) : undefined) ?? fail('awbDelay', `awbDelay "${String(value)}" is not a delay: use 0, 500ms, 3s or a range such as 2s-10s.`),
  },
  clock: {
    flag: '--clock <mode>',
    env: 'SANDBOX_CLOCK',
    help: 'real or manual',
    default: 'real',
    resolve: (value) => (value === 'real' || value === 'manual' ? value : fail('clock', `clock "${String(value)}" is not a clock: use real or manual.`)),
  },
  clockStart: {
    flag: '--clock-start <time>',
    env: 'SANDBOX_CLOCK_START',
    help: 'manual clock: start time, ISO 8601 or epoch ms',
    default: undefined,
    resolve: (value) => {
      if (value === undefined) return undefined;
      const start = instant(value);
      // Answers show times up to the end of year 9999; keep a century of room for advances.
      if (start === undefined) {
        return fail('clockStart', `clockStart "${String(value)}" is not a time: use ISO 8601 with its offset (2026-01-01T00:00:00Z, or a date: 2026-01-01) or epoch milliseconds, at the latest ${new Date(LATEST_CLOCK_START_MS).toISOString()}.`);
      }
      if (start > LATEST_CLOCK_START_MS) {
        return fail('clockStart', `clockStart "${String(value)}" is after ${new Date(LATEST_CLOCK_START_MS).toISOString()}, the latest start the manual clock takes (answers show times up to the end of year 9999, with a century of room for advances).`);
      }
      // Epoch seconds (what tracking's update_on shows) read as milliseconds land in January 1970.
      if (start < EARLIEST_CLOCK_START_MS) {
        return /^\s*\d+\s*$/.test(String(value))
          ? fail('clockStart', `clockStart "${String(value)}" is ${new Date(start).toISOString()} in epoch milliseconds: for epoch seconds multiply by 1000, or use ISO 8601 (2026-01-01T00:00:00Z).`)
          : fail('clockStart', `clockStart "${String(value)}" is before ${new Date(EARLIEST_CLOCK_START_MS).toISOString()}, the earliest start the manual clock takes.`);
      }
      return start;
    },
  },
  speed: {
    flag: '--speed <factor>',
    env: 'SANDBOX_SPEED',
    help: 'simulated time per real time, with a real clock',
    default: 1,
    fromText: (text) => (/^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : fail('speed', `speed must be a positive decimal number, not ${text}.`)),
    resolve: (value) => (typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : fail('speed', `speed must be a positive number, not ${String(value)}.`)),
  },
  // An empty value (SANDBOX_SEED= from a compose file whose variable is unset) is no seed.
  seed: { flag: '--seed <seed>', env: 'SANDBOX_SEED', help: 'makes numbers, AWBs and delays reproducible', default: undefined, resolve: (value) => {
      if (value === undefined || String(value) === '') return undefined;
      // A text or a number (in-process); NaN, true or an object would be a seed no one meant.
      return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? String(value) : fail('seed', `seed must be a text or a number, not ${JSON.stringify(value) ?? String(value)}.`);
    } },
  config: { flag: '--config <file>', env: 'SANDBOX_CONFIG', help: 'JSON or YAML file with per-client settings', default: undefined, resolve: optionalText('config') },
  clients: { default: [], resolve: (value) => (Array.isArray(value) ? value : fail('clients', 'clients must be a list of client settings.')) },
  scenario: { flag: '--scenario <name>', env: 'SANDBOX_SCENARIO', help: 'default scenario of orders that name none', default: 'delivered', resolve: text('scenario') },
  bodyLimit: {
    flag: '--body-limit <size>',
    env: 'SANDBOX_BODY_LIMIT',
    help: 'largest request body, e.g. 1mb, 500kb (1kb to 100mb)',
    default: '1mb',
    resolve: (value) => {
      // Read as body-parser reads it (the bytes package), so what is checked here is what applies.
      const size = typeof value === 'string' ? parseBytes(value) : null;
      return size !== null && Number.isFinite(size) && size >= 1024 && size <= 100 * 1024 * 1024
        ? String(value)
        : fail('bodyLimit', `bodyLimit "${String(value)}" is not a size from 1kb to 100mb: use for example 1mb or 500kb.`);
    },
  },
  maxItems: { flag: '--max-items <n>', env: 'SANDBOX_MAX_ITEMS', help: 'most items in one create request', default: 100, ...wholeNumber('maxItems', 1) },
  maxHeaderSize: {
    flag: '--max-header-size <bytes>',
    env: 'SANDBOX_MAX_HEADER_SIZE',
    help: 'largest request head (request line and headers) in bytes',
    default: 16384,
    ...wholeNumber('maxHeaderSize', 1024),
  },
  maxConnections: {
    flag: '--max-connections <n>',
    env: 'SANDBOX_MAX_CONNECTIONS',
    help: 'most connections open at once (HTTP and listen sessions); past it a new one is closed at once, with a warning in the log',
    default: 10_000,
    ...wholeNumber('maxConnections', 1),
  },
  corsOrigins: {
    flag: '--cors-origins <origins>',
    env: 'SANDBOX_CORS_ORIGINS',
    help: 'origins browsers may call from: * for any, a comma-separated list, or none',
    default: ['*'],
    fromText: (value) => (value.trim() === 'none' ? [] : list(value)),
    resolve: (value) => {
      if (!Array.isArray(value)) return fail('corsOrigins', 'corsOrigins must be a list of origins.');
      const wrong = value.find((origin) => origin !== '*' && !isOrigin(String(origin)));
      return wrong === undefined
        ? value
        : fail('corsOrigins', `corsOrigins "${String(wrong)}" is not an origin: use *, none, or origins such as https://tools.example.com,http://localhost:3000 (scheme, host and port, no path).`);
    },
  },
  outboxSize: { flag: '--outbox-size <n>', env: 'SANDBOX_OUTBOX_SIZE', help: 'most webhook deliveries held per client for want of a URL or a live endpoint', default: 10000, ...wholeNumber('outboxSize', 1) },
  strict: { flag: '--strict', env: 'SANDBOX_STRICT', help: 'log a warning for every spec violation in a client request', default: false, resolve: switchOf('strict') },
  journalSize: { flag: '--journal-size <n>', env: 'SANDBOX_JOURNAL_SIZE', help: 'most request-journal entries kept per client (0: none)', default: 1000, ...wholeNumber('journalSize') },
  heapGrowth: {
    flag: '--heap-growth <percent>',
    env: 'SANDBOX_HEAP_GROWTH',
    help: "how far V8's old space may grow between full collections once listening, in % of the live data (10 to 400; more: fewer GC pauses, more memory)",
    default: 75,
    ...wholeNumber('heapGrowth', 10, 400),
  },
  logLevel: {
    flag: '--log-level <level>',
    env: 'SANDBOX_LOG_LEVEL',
    help: 'fatal, error, warn, info, debug, trace or silent',
    default: 'silent',
    cliDefault: 'info',
    resolve: (value) => (LOG_LEVELS.includes(String(value)) ? as(value) : fail('logLevel', `logLevel "${String(value)}" is not a level: use ${LOG_LEVELS.join(', ')}.`)),
  },
  fsync: { flag: '--fsync', env: 'SANDBOX_FSYNC', help: 'fsync every journal write: survives power loss; slower', default: false, resolve: switchOf('fsync') },
  salvageJournal: {
    flag: '--salvage-journal',
    env: 'SANDBOX_SALVAGE_JOURNAL',
    help: 'start from what is intact when the journal is damaged: move the damaged segment and those after it into a dated folder, log what was lost',
    default: false,
    resolve: switchOf('salvageJournal'),
  },
  providerSpec: {
    flag: '--spec <file>',
    env: 'SANDBOX_SPEC',
    help: 'provider spec (OpenAPI 3.1, YAML or JSON) to serve instead of the bundled one',
    default: PROVIDER_SPEC,
    shownDefault: 'the bundled spec/openapi.yaml',
    resolve: text('providerSpec'),
  },
  rateLimit: {
    flag: '--rate-limit <n>',
    env: 'SANDBOX_RATE_LIMIT',
    help: 'most requests per second per client, counted per process (0: no limit)',
    default: 0,
    ...wholeNumber('rateLimit'),
  },
  retention: {
    flag: '--retention <duration>',
    env: 'SANDBOX_RETENTION',
    help: "remove orders older than this on their client's clock, e.g. 30d",
    default: undefined,
    // A unit is required: a bare number would be milliseconds, and beside SANDBOX_RETENTION_ORDERS=200000 one reads as a count.
    resolve: (value) => (value === undefined ? undefined : /^\s*\d+\s*$/.test(value) ? fail('retention', `retention "${value}" has no unit: use for example 30d, 12h or 90m (a bare number would be milliseconds; a count of orders is --retention-orders)`) : duration('retention', '30d, 12h or 90m')(value)),
  },
  retentionOrders: {
    flag: '--retention-orders <n>',
    env: 'SANDBOX_RETENTION_ORDERS',
    help: "most orders kept per client: past it the client's oldest are removed (0: no limit)",
    default: 0,
    ...wholeNumber('retentionOrders'),
  },
  jobLease: {
    flag: '--job-lease <duration>',
    env: 'SANDBOX_JOB_LEASE',
    help: 'PostgreSQL: how long a replica holds a claimed job before another may take it over (at least --webhook-timeout + 5s)',
    default: '60s',
    resolve: duration('jobLease', '60s or 2m'),
  },
  listenerExpiry: {
    flag: '--listener-expiry <duration>',
    env: 'SANDBOX_LISTENER_EXPIRY',
    help: 'remove a listener (shipping-sandbox listen) not connected for this long on its client\'s clock, failing its held deliveries',
    default: '24h',
    resolve: duration('listenerExpiry', '24h or 90m'),
  },
  databaseUrl: {
    flag: '--database-url <url>',
    env: 'SANDBOX_DATABASE_URL',
    help: 'postgres://user:password@host:port/database: keep everything in PostgreSQL (replicas may share it) instead of --data',
    default: undefined,
    secret: true,
    resolve: (value) =>
      value === undefined
        ? undefined
        : /^postgres(ql)?:\/\/\S+$/.test(String(value))
          ? String(value)
          : fail('databaseUrl', 'databaseUrl must be a postgres:// or postgresql:// URL, e.g. postgres://sandbox:secret@db:5432/sandbox.'),
  },
  databaseWait: {
    flag: '--database-wait <duration>',
    env: 'SANDBOX_DATABASE_WAIT',
    help: 'PostgreSQL: how long the start waits for an unreachable database, trying again with a growing pause, before it exits 1 (0: no wait)',
    default: '60s',
    resolve: (value) => {
      unitRequired('databaseWait', value, '60s or 5m');
      const ms = typeof value === 'string' ? parseDuration(value) : undefined;
      return ms !== undefined && ms >= 0 ? ms : fail('databaseWait', `databaseWait "${String(value)}" is not a duration: use for example 60s, 5m or 0.`);
    },
  },
};
