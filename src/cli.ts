#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { Command, InvalidArgumentError, Option } from 'commander';
import { VERSION } from './version.js';
import { DEFAULT_RETRIES } from './webhooks/retry.js';
import type { SandboxOptions } from './config/options.js';
import { parseRetention } from './retention/module.js';
import { createSandbox } from './sandbox.js';
import { webhookBannerLine } from './webhooks/banner.js';

const integer = (name: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number.`);
  return Number(value);
};
const positive = (value: string) => {
  const n = Number(value);
  if (!(n > 0)) throw new InvalidArgumentError('must be a positive number.');
  return n;
};
const retention = (value: string) => {
  if (parseRetention(value) === undefined) throw new InvalidArgumentError('must be a duration such as 30d, 12h or 90m.');
  return value;
};
const corsOrigins = (value: string): string[] =>
  value.trim() === 'none' ? [] : value.split(',').map((o) => o.trim()).filter(Boolean);
/** A switch from the environment: 1, true, yes or on (any case) turn it on; anything else leaves it off. */
const envSwitch = (name: string): boolean => /^(1|true|yes|on)$/i.test(process.env[name]?.trim() ?? '');
const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((t) => t.trim()).filter(Boolean)];

// A long-running sandbox holds its whole store in memory. V8's default lets the old
// space grow to several times the live data between full collections; 100% keeps the
// peak RSS under twice the live data (see docs/decisions/0001-journaled-store.md).
// A heap-growing flag given to node by the user wins.
if (![...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => arg.includes('heap-growing-percent'))) {
  setFlagsFromString('--heap-growing-percent=75');
}

/** The command line: flags with environment fallbacks, exactly as DESIGN.md's stable interfaces. */
export function program(): Command {
  return new Command('shipping-sandbox')
    .description('A stateful sandbox of the Shipping Order Service API.')
    .version(VERSION)
    .addOption(new Option('--port <port>', 'port to listen on, 0 for any free port').env('PORT').default(4010).argParser(integer('port')))
    .addOption(new Option('--host <host>', 'interface to listen on').env('HOST').default('127.0.0.1'))
    .addOption(new Option('--data <file>', 'data file, or :memory: to keep nothing').env('SANDBOX_DATA').default('./data/sandbox.json'))
    .addOption(new Option('--token <token>', 'a client token (repeatable; the variable is comma-separated)').env('SANDBOX_TOKENS').argParser(collect))
    .addOption(new Option('--webhook-url <url>', 'default webhook URL of every client').env('SANDBOX_WEBHOOK_URL'))
    .addOption(new Option('--webhook-secret <secret>', 'default webhook secret (whsec_...); generated when absent').env('SANDBOX_WEBHOOK_SECRET'))
    .addOption(new Option('--webhook-retries <delays>', 'webhook retry schedule, one delay per attempt').env('SANDBOX_WEBHOOK_RETRIES').default(DEFAULT_RETRIES))
    .addOption(new Option('--webhook-timeout <duration>', 'how long a webhook attempt may take').env('SANDBOX_WEBHOOK_TIMEOUT').default('10s'))
    .addOption(new Option('--awb-delay <delay>', 'delay from create to AWB: 0, 500ms, 3s or a range 2s-10s').env('SANDBOX_AWB_DELAY').default('3s'))
    .addOption(new Option('--clock <mode>', 'real or manual').env('SANDBOX_CLOCK').choices(['real', 'manual']).default('real'))
    .addOption(new Option('--clock-start <time>', 'manual clock: start time, ISO 8601 or epoch ms').env('SANDBOX_CLOCK_START'))
    .addOption(new Option('--speed <factor>', 'simulated time per real time, with a real clock').env('SANDBOX_SPEED').default(1).argParser(positive))
    .addOption(new Option('--seed <seed>', 'makes numbers, AWBs and delays reproducible').env('SANDBOX_SEED'))
    .addOption(new Option('--config <file>', 'JSON or YAML file with per-client settings').env('SANDBOX_CONFIG'))
    .addOption(new Option('--scenario <name>', 'default scenario of orders that name none').env('SANDBOX_SCENARIO').default('delivered'))
    .addOption(new Option('--body-limit <size>', 'largest request body').env('SANDBOX_BODY_LIMIT').default('1mb'))
    .addOption(new Option('--max-items <n>', 'most items in one create request').env('SANDBOX_MAX_ITEMS').default(100).argParser(integer('max-items')))
    .addOption(new Option('--max-header-size <bytes>', 'largest request head (request line and headers) in bytes').env('SANDBOX_MAX_HEADER_SIZE').default(16384).argParser(integer('max-header-size')))
    .addOption(new Option('--cors-origins <origins>', 'origins browsers may call from: * for any, a comma-separated list, or none').env('SANDBOX_CORS_ORIGINS').default('*'))
    .addOption(new Option('--outbox-size <n>', 'most webhook deliveries held per client for want of a URL or a live endpoint').env('SANDBOX_OUTBOX_SIZE').default(10000).argParser(integer('outbox-size')))
    .addOption(new Option('--strict', 'log a warning for every spec violation in a client request (env SANDBOX_STRICT=1)'))
    .addOption(new Option('--journal-size <n>', 'most request-journal entries kept per client (0: none)').env('SANDBOX_JOURNAL_SIZE').default(1000).argParser(integer('journal-size')))
    .addOption(new Option('--fsync', 'fsync every journal write: survives power loss; slower (env SANDBOX_FSYNC=1)'))
    .addOption(new Option('--spec <file>', 'provider spec (OpenAPI 3.1, YAML or JSON) to serve instead of the bundled one').env('SANDBOX_SPEC'))
    .addOption(new Option('--retention <duration>', 'remove orders older than this on the sandbox clock, e.g. 30d').env('SANDBOX_RETENTION').argParser(retention))
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug or silent').env('SANDBOX_LOG_LEVEL').default('info'));
}

function toOptions(flags: Record<string, unknown>): SandboxOptions {
  return {
    port: flags.port as number,
    host: flags.host as string,
    data: flags.data as string,
    tokens: flags.token as string[] | undefined,
    webhookUrl: flags.webhookUrl as string | undefined,
    webhookSecret: flags.webhookSecret as string | undefined,
    webhookRetries: flags.webhookRetries as string,
    webhookTimeout: flags.webhookTimeout as string,
    awbDelay: flags.awbDelay as string,
    clock: flags.clock as 'real' | 'manual',
    clockStart: flags.clockStart as string | undefined,
    speed: Number(flags.speed),
    seed: flags.seed as string | undefined,
    config: flags.config as string | undefined,
    scenario: flags.scenario as string,
    bodyLimit: flags.bodyLimit as string,
    maxItems: flags.maxItems as number,
    maxHeaderSize: flags.maxHeaderSize as number,
    corsOrigins: corsOrigins(flags.corsOrigins as string),
    outboxSize: flags.outboxSize as number,
    strict: Boolean(flags.strict) || envSwitch('SANDBOX_STRICT'),
    journalSize: flags.journalSize as number,
    fsync: Boolean(flags.fsync) || envSwitch('SANDBOX_FSYNC'),
    providerSpec: flags.spec as string | undefined,
    logLevel: flags.logLevel as string,
    retention: flags.retention as string | undefined,
  };
}

async function main(): Promise<void> {
  const flags = program().parse().opts();
  const options = toOptions(flags);
  const sandbox = await createSandbox(options);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    sandbox.services.logger.info({ signal }, 'stopping');
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const lines = [
    `Shipping Order Sandbox ${VERSION} listening on ${sandbox.url}`,
    ...sandbox.clients.map((c) => `  token:  ${c.token}  (client ${c.id})`),
    ...(await Promise.all(sandbox.clients.map((c) => webhookBannerLine(sandbox.services.endpoints, c)))),
    `  data:   ${options.data}`,
    `  clock:  ${sandbox.clock.mode}${sandbox.clock.mode === 'real' ? ` x${options.speed}` : ''}`,
    `  docs:   ${sandbox.url}/docs`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  // Start-up failures (a corrupt data file, a port in use, a bad flag) are the user's to fix: a message, no stack.
  process.stderr.write(`shipping-sandbox: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
