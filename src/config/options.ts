import { DEFAULT_RETRIES } from '../webhooks/retry.js';
import { PROVIDER_SPEC } from '../spec/load.js';
import type { ClientConfig } from './clients.js';

/**
 * Options of `createSandbox`, one per CLI flag (see `shipping-sandbox --help`).
 *
 * @example createSandbox({ clock: 'manual', seed: 1, tokens: ['test-token'] })
 */
export interface SandboxOptions {
  /** Port to listen on; 0 picks a free one. Default 4010 for the CLI, 0 in-process. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Data file, or ':memory:' to keep nothing. Default './data/sandbox.json' for the CLI, ':memory:' in-process. */
  data?: string;
  /** Bearer tokens, one client each. When none is given (here or in config) one is made and printed. */
  tokens?: string[];
  /** Default webhook URL of every client. */
  webhookUrl?: string;
  /** Default webhook secret (`whsec_` + base64); generated when absent. */
  webhookSecret?: string;
  /** Webhook retry schedule: the delay of each attempt, e.g. '0,5s,30s,2m'. Default '0,5s,30s,2m,10m,1h,6h'. */
  webhookRetries?: string;
  /** How long a webhook attempt may take before it counts as failed, e.g. '10s'. Default '10s'. */
  webhookTimeout?: string;
  /** Delay from create to AWB: '0', '500ms', '3s', or a range '2s-10s'. Default '3s'. */
  awbDelay?: string;
  /** 'real' (default) or 'manual'. */
  clock?: 'real' | 'manual';
  /** Manual clock only: where it starts (ISO 8601 or epoch ms), unless the data file's clock is later. Default: now. */
  clockStart?: string;
  /** Simulated ms per real ms with a real clock. Default 1. */
  speed?: number;
  /** Makes numbers, AWBs, delays and generated data reproducible. */
  seed?: string;
  /** Path of a JSON or YAML file with per-client settings (`clients: [...]`). */
  config?: string;
  /** Per-client settings given in-process (merged after the config file's). */
  clients?: ClientConfig[];
  /** Default scenario for orders that name none. Default 'delivered'. */
  scenario?: string;
  /** Largest accepted body, e.g. '1mb'. Default '1mb'. */
  bodyLimit?: string;
  /** Most items in one create request. Default 100. */
  maxItems?: number;
  /** Largest request head (request line and headers) in bytes; above it a 431. Default 16384 (Node's). */
  maxHeaderSize?: number;
  /** Origins browsers may call from: ['*'] (default) any, a list of origins, or [] for no CORS headers. */
  corsOrigins?: string[];
  /** Most webhook deliveries held (paused) per client for want of a URL or a live endpoint; past it a new one is recorded as failed ("Outbox full"). Deliveries to a live endpoint never count. Default 10000. */
  outboxSize?: number;
  /** Log each spec violation of a client request as a warning. */
  strict?: boolean;
  /** Most request-journal entries kept per client (`GET /__sandbox/requests`); the oldest are dropped. 0 keeps none. Default 1000. */
  journalSize?: number;
  /** pino level: 'info' for the CLI, 'silent' in-process by default. */
  logLevel?: string;
  /** fsync every journal write (survives power loss, slower). Default false. */
  fsync?: boolean;
  /** Path of the provider spec (YAML or JSON) to serve instead of the bundled spec/openapi.yaml, e.g. a fuller spec from the provider. */
  providerSpec?: string;
  /** Removes orders (and their deliveries and journal entries) older than this on the sandbox clock, e.g. '30d'. Default: keep everything. */
  retention?: string;
}

/** Options with every default filled in. */
export type ResolvedOptions = Required<Omit<SandboxOptions, 'webhookUrl' | 'webhookSecret' | 'seed' | 'config' | 'tokens' | 'clockStart' | 'retention'>> &
  Pick<SandboxOptions, 'webhookUrl' | 'webhookSecret' | 'seed' | 'config' | 'clockStart' | 'retention'> & { tokens: string[] };

export function resolveOptions(options: SandboxOptions): ResolvedOptions {
  return {
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    data: options.data ?? ':memory:',
    tokens: options.tokens ?? [],
    webhookUrl: options.webhookUrl,
    webhookSecret: options.webhookSecret,
    webhookRetries: options.webhookRetries ?? DEFAULT_RETRIES,
    webhookTimeout: options.webhookTimeout ?? '10s',
    awbDelay: options.awbDelay ?? '3s',
    clock: options.clock ?? 'real',
    clockStart: options.clockStart,
    speed: options.speed ?? 1,
    seed: options.seed,
    config: options.config,
    clients: options.clients ?? [],
    scenario: options.scenario ?? 'delivered',
    bodyLimit: options.bodyLimit ?? '1mb',
    maxItems: options.maxItems ?? 100,
    maxHeaderSize: options.maxHeaderSize ?? 16384,
    corsOrigins: options.corsOrigins ?? ['*'],
    outboxSize: options.outboxSize ?? 10000,
    strict: options.strict ?? false,
    journalSize: options.journalSize ?? 1000,
    logLevel: options.logLevel ?? 'silent',
    fsync: options.fsync ?? false,
    providerSpec: options.providerSpec ?? PROVIDER_SPEC,
    retention: options.retention,
  };
}
