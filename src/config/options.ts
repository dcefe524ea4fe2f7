import type { ClientConfig } from '../clients/index.js';
import type { DelayRange } from '../shared/index.js';
import type { TargetPolicy } from '../webhooks/index.js';

/**
 * Options of `createSandbox`, one per CLI flag (see `shipping-sandbox --help`). Durations
 * are text here ('3s', '2s-10s'); they are read once, at start, into milliseconds.
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
  /** Admin tokens: act for any client (`X-Sandbox-Client`) and do the sandbox-wide operations. None by default. */
  adminTokens?: string[];
  /** Default webhook URL of every client. */
  webhookUrl?: string;
  /** Default webhook secret (`whsec_` + base64); generated when absent. */
  webhookSecret?: string;
  /** Webhook retry schedule: the delay of each attempt, e.g. '0,5s,30s,2m'. Default '0,5s,30s,2m,10m,1h,6h'. */
  webhookRetries?: string;
  /** How long a webhook attempt may take before it counts as failed, e.g. '10s'. Default '10s'. */
  webhookTimeout?: string;
  /**
   * Where webhook URLs set through the API may point: 'any' (default), 'public' (no loopback,
   * private, link-local or other special-use address, checked again on the resolved address
   * at connect time), or a comma-separated allow list of hosts and CIDRs, which may include
   * 'public': 'public,hooks.partner.test,10.20.0.0/16'. URLs configured here or in the config file are trusted.
   */
  webhookTargets?: string;
  /** Delay from create to AWB: '0', '500ms', '3s', or a range '2s-10s'. Default '3s'. */
  awbDelay?: string;
  /** 'real' (default) or 'manual'. */
  clock?: 'real' | 'manual';
  /** Manual clock only: where it starts (ISO 8601 or epoch ms), unless the data file's clock is later. Default: now. */
  clockStart?: string;
  /** Simulated ms per real ms with a real clock. Default 1. */
  speed?: number;
  /** Makes numbers, AWBs, delays and generated data reproducible. A number is read as its text: `1` and `'1'` are one seed. */
  seed?: string | number;
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
  /** Most connections open at once (HTTP and listen sessions); past it a new one is closed as it arrives, with a warning a minute. Default 10000. */
  maxConnections?: number;
  /** Origins browsers may call from: ['*'] (default) any, a list of origins, or [] for no CORS headers. */
  corsOrigins?: string[];
  /** Most webhook deliveries held (paused) per client for want of a URL or a live endpoint; past it a new one is recorded as failed ("Outbox full"). Deliveries to a live endpoint never count. Default 10000. */
  outboxSize?: number;
  /** Log each spec violation of a client request as a warning. */
  strict?: boolean;
  /** Most request-journal entries kept per client (`GET /__sandbox/requests`); the oldest are dropped. 0 keeps none. Default 1000. */
  journalSize?: number;
  /**
   * CLI only: how far V8's old space may grow between full collections once the sandbox
   * listens, in % of the live data (V8's `--heap-growing-percent`): more means fewer GC
   * pauses under load and a higher memory peak. Default 75. A `--heap-growing-percent`
   * given to node itself wins.
   */
  heapGrowth?: number;
  /** pino level: 'info' for the CLI, 'silent' in-process by default. */
  logLevel?: string;
  /** fsync every journal write (survives power loss, slower). Default false. */
  fsync?: boolean;
  /**
   * Start from what is intact when the embedded store's journal is damaged (an older
   * segment cut short or missing, a line that is not a commit): the damaged segment and
   * those after it are moved into a dated folder beside the data file, and what was set
   * aside is logged. Without it such a start is refused, every file untouched. Default false.
   */
  salvageJournal?: boolean;
  /** Path of the provider spec (YAML or JSON) to serve instead of the bundled spec/openapi.yaml, e.g. a fuller spec from the provider. */
  providerSpec?: string;
  /** Most requests per second per client (provider and control together), counted per process; past it a 429 with Retry-After. Default 0: no limit. */
  rateLimit?: number;
  /** Removes orders (and their deliveries and journal entries) older than this on their client's clock, e.g. '30d'. Default: keep everything. */
  retention?: string;
  /** Most orders kept per client: past it, the client's oldest are removed with everything of their age, as retention removes them. Default 0: no limit. */
  retentionOrders?: number;
  /** `postgres://user:password@host:port/database`: keep everything in PostgreSQL (several replicas may share it) instead of the data file. */
  databaseUrl?: string;
  /** PostgreSQL: how long the start waits for a database it cannot reach yet (trying again with a growing pause), e.g. '60s'; then the start fails. '0': no wait. Default '60s'. */
  databaseWait?: string;
  /**
   * PostgreSQL: how long a replica's claim on a due job holds before another replica may
   * take the job over (its replica died), e.g. '60s'. At least the webhook timeout plus 5 s. Default '60s'.
   */
  jobLease?: string;
  /**
   * How long a listener (`shipping-sandbox listen`) may stay away, on its client's clock,
   * before its endpoint is removed and its held deliveries fail, e.g. '24h'. Default '24h'.
   */
  listenerExpiry?: string;
}

/** The options as the sandbox uses them: every default filled in, durations in milliseconds. */
export interface ResolvedOptions {
  port: number;
  host: string;
  data: string;
  tokens: string[];
  adminTokens: string[];
  webhookUrl: string | undefined;
  webhookSecret: string | undefined;
  /** Delay of each attempt, ms. */
  webhookRetries: number[];
  /** ms. */
  webhookTimeout: number;
  webhookTargets: TargetPolicy;
  awbDelay: DelayRange;
  clock: 'real' | 'manual';
  /** Epoch ms. */
  clockStart: number | undefined;
  speed: number;
  seed: string | undefined;
  config: string | undefined;
  clients: ClientConfig[];
  scenario: string;
  bodyLimit: string;
  maxItems: number;
  maxHeaderSize: number;
  maxConnections: number;
  corsOrigins: string[];
  outboxSize: number;
  strict: boolean;
  journalSize: number;
  heapGrowth: number;
  logLevel: string;
  fsync: boolean;
  salvageJournal: boolean;
  providerSpec: string;
  /** Requests per second per client; 0: no limit. */
  rateLimit: number;
  /** ms. */
  retention: number | undefined;
  /** Orders kept per client; 0: no limit. */
  retentionOrders: number;
  databaseUrl: string | undefined;
  /** ms. */
  databaseWait: number;
  /** ms. */
  jobLease: number;
  /** ms. */
  listenerExpiry: number;
}

/**
 * How long a claimed job is held (wall ms): `--job-lease`, but always longer than the
 * longest webhook attempt by 5 s, so an attempt in flight, and the record of its outcome,
 * end within the claim, before another replica may take the job over.
 */
export const claimLeaseMs = (options: Pick<ResolvedOptions, 'jobLease' | 'webhookTimeout'>): number => Math.max(options.jobLease, options.webhookTimeout + 5_000);
