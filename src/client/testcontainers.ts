import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { load } from 'js-yaml';
import { AbstractStartedContainer, GenericContainer, type RestartOptions, type StartedTestContainer, type StopOptions, type StoppedTestContainer } from 'testcontainers';
import { parseDuration } from '../shared/index.js';
import { SandboxHealthWait } from './testcontainers-wait.js';

/** The port the image listens on (its contract: docs/guides/image.md). */
export const SANDBOX_PORT = 4010;
/** The stop grace with the image's webhook timeout (10 s): that timeout plus 5 s, so a drain is not cut by SIGKILL (testcontainers' own default is 0). */
export const STOP_GRACE_MS = 15_000;

/**
 * The stop grace for the webhook timeout the container is given (SANDBOX_WEBHOOK_TIMEOUT,
 * e.g. `30s`): that timeout plus 5 s, as docs/guides/image.md asks; STOP_GRACE_MS when none is given.
 *
 * @example stopGraceMs('30s') // 35_000
 */
export function stopGraceMs(webhookTimeout: string | undefined): number {
  const ms = webhookTimeout === undefined ? undefined : parseDuration(webhookTimeout);
  return ms === undefined ? STOP_GRACE_MS : ms + 5_000;
}
/** The image the module starts when none is named: built from this package's Dockerfile as `docker build -t shipping-sandbox .`. */
export const DEFAULT_IMAGE = 'shipping-sandbox:latest';

/**
 * The target policy the module sets unless told otherwise: the image's `public`, plus the names
 * a container reaches its test host by (podman, Docker Desktop, Testcontainers' exposed ports),
 * so a receiver in the test process may be set through the API too.
 */
export const TEST_HOST_TARGETS = 'public,host.containers.internal,host.docker.internal,host.testcontainers.internal';

/** What a test sets on the sandbox; each maps to one of the image's `SANDBOX_*` variables. */
export interface ShippingSandboxOptions {
  /**
   * Bearer tokens, one client each (SANDBOX_TOKENS), the first the helpers' (`getToken()`).
   * Default: one random token. With `configFile`, a token of the file's clients is theirs
   * (not added again), any other a client of its own; with no token given, the file's
   * clients alone (no random one, unless the file has only admins).
   */
  tokens?: string[];
  /** `manual` (moves only when told, the usual choice in tests) or `real` (SANDBOX_CLOCK). Default: manual. */
  clock?: 'manual' | 'real';
  /** Where a manual clock starts, an ISO date-time (SANDBOX_CLOCK_START). */
  clockStart?: string;
  /** Makes ids and answers reproducible (SANDBOX_SEED). */
  seed?: string | number;
  /** How long an AWB takes, e.g. `5s` or `2s-10s` (SANDBOX_AWB_DELAY). */
  awbDelay?: string;
  /** Default webhook URL of every client (SANDBOX_WEBHOOK_URL). A receiver on the test host is `http://host.containers.internal:PORT/...` under podman, `http://host.docker.internal:PORT/...` under Docker Desktop. */
  webhookUrl?: string;
  /** Default webhook secret, `whsec_...` (SANDBOX_WEBHOOK_SECRET). */
  webhookSecret?: string;
  /** Where webhook URLs set through the API may point: `any`, `public`, or a list of hosts and CIDRs (SANDBOX_WEBHOOK_TARGETS). Default: TEST_HOST_TARGETS. */
  webhookTargets?: string;
  /** The scenario new orders follow (SANDBOX_SCENARIO). */
  scenario?: string;
  /**
   * A clients file (JSON or YAML) on the test host; read here for its tokens, copied into
   * the container and named by SANDBOX_CONFIG. Give `tokens` the one the helpers call as.
   */
  configFile?: string;
  /** The data file inside the container, or `:memory:` (SANDBOX_DATA). Default: `:memory:`, a throwaway run. */
  data?: string;
  /** SANDBOX_LOG_LEVEL. Default: the image's (info). */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Any other variable of the image (docs/reference/configuration.md). */
  env?: Record<string, string>;
}

/** The tokens of a clients file (JSON or YAML), and whether it has a client that is not an admin. */
function clientsOfFile(path: string): { tokens: Set<string>; hasClients: boolean } {
  let clients: unknown;
  try {
    clients = (load(readFileSync(path, 'utf8')) as { clients?: unknown } | null)?.clients ?? [];
  } catch (error) {
    throw new Error(`configFile ${path} could not be read: ${(error as Error).message}`);
  }
  const entries = (Array.isArray(clients) ? clients : []) as Array<{ token?: unknown; role?: unknown }>;
  return {
    tokens: new Set(entries.flatMap((entry) => (typeof entry.token === 'string' ? [entry.token] : []))),
    hasClients: entries.some((entry) => entry.role !== 'admin'),
  };
}

/**
 * The sandbox image as a Testcontainers container: sets the variables from typed options,
 * exposes port 4010 and waits until `GET /__sandbox/health` answers 200; a container that
 * exits first (a variable refused) fails `start()` at once, with its last log lines.
 *
 * @example
 * const sandbox = await new ShippingSandboxContainer('shipping-sandbox:latest', { seed: 'ci' }).start();
 * await fetch(`${sandbox.getBaseUrl()}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${sandbox.getToken()}` }, body });
 * await sandbox.advanceClock(60_000);
 * await sandbox.stop();
 */
export class ShippingSandboxContainer extends GenericContainer {
  private readonly tokens: string[];
  private readonly graceMs: number;

  constructor(image: string = DEFAULT_IMAGE, options: ShippingSandboxOptions = {}) {
    super(image);
    const given = options.tokens ?? [];
    const file = options.configFile === undefined ? undefined : clientsOfFile(options.configFile);
    // With none given, a random client, unless the clients file has clients of its own (a random one would be a client beside them).
    this.tokens = given.length > 0 || (file?.hasClients ?? false) ? given : [`tc-${randomBytes(12).toString('hex')}`];
    // The file's tokens are its own clients (given again they would stop the start as duplicates); any other token is a client of its own.
    const added = this.tokens.filter((token) => !file?.tokens.has(token));
    const env: Record<string, string | undefined> = {
      SANDBOX_TOKENS: added.length > 0 ? added.join(',') : undefined,
      SANDBOX_CLOCK: options.clock ?? 'manual',
      SANDBOX_CLOCK_START: options.clockStart,
      SANDBOX_SEED: options.seed === undefined ? undefined : String(options.seed),
      SANDBOX_AWB_DELAY: options.awbDelay,
      SANDBOX_WEBHOOK_URL: options.webhookUrl,
      SANDBOX_WEBHOOK_SECRET: options.webhookSecret,
      SANDBOX_WEBHOOK_TARGETS: options.webhookTargets ?? TEST_HOST_TARGETS,
      SANDBOX_SCENARIO: options.scenario,
      SANDBOX_DATA: options.data ?? ':memory:',
      SANDBOX_LOG_LEVEL: options.logLevel,
      ...options.env,
    };
    this.graceMs = stopGraceMs(env.SANDBOX_WEBHOOK_TIMEOUT);
    if (options.configFile !== undefined) {
      const target = `/app/config/${basename(options.configFile)}`;
      this.withCopyFilesToContainer([{ source: options.configFile, target, mode: 0o644 }]);
      env.SANDBOX_CONFIG = target;
    }
    this.withEnvironment(Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)))
      .withExposedPorts(SANDBOX_PORT)
      .withWaitStrategy(new SandboxHealthWait(SANDBOX_PORT))
      .withStartupTimeout(60_000);
  }

  override async start(): Promise<StartedShippingSandboxContainer> {
    return new StartedShippingSandboxContainer(await super.start(), this.tokens, this.graceMs);
  }
}

/** A running sandbox container, with the helpers a test needs. */
export class StartedShippingSandboxContainer extends AbstractStartedContainer {
  constructor(
    started: StartedTestContainer,
    private readonly tokens: string[],
    /** The stop grace: stopGraceMs of the container's webhook timeout. */
    private readonly graceMs: number = STOP_GRACE_MS,
  ) {
    super(started);
  }

  /** SIGTERM, then up to the webhook timeout plus 5 s (STOP_GRACE_MS with the default timeout) for the sandbox to drain and exit 0 before SIGKILL. */
  override stop(options: Partial<StopOptions> = {}): Promise<StoppedTestContainer> {
    return super.stop({ timeout: this.graceMs, ...options });
  }

  /** The same grace as `stop` (Testcontainers' own restart kills at once: an attempt in flight would be cut and sent again). */
  override restart(options: Partial<RestartOptions> = {}): Promise<void> {
    return super.restart({ timeout: this.graceMs, ...options });
  }

  /** `http://HOST:PORT` of the sandbox as the test process reaches it. */
  getBaseUrl(): string {
    return `http://${this.getHost()}:${this.getMappedPort(SANDBOX_PORT)}`;
  }

  /** The helpers' token: the first of `tokens`, or the random one when none was given and no clients file has clients; `getTokens()` has them all. */
  getToken(): string {
    const [token] = this.tokens;
    if (token === undefined) throw new Error('This sandbox runs the clients of its configFile, and no token of theirs was given: pass their tokens as `tokens` (or a token to each helper).');
    return token;
  }

  getTokens(): string[] {
    return [...this.tokens];
  }

  /** Calls the sandbox as the client of `token` (default: the first); answers the status and the parsed JSON body (the text of an answer that is not JSON: a JUnit report). */
  async request<T = unknown>(method: string, path: string, body?: unknown, token: string = this.getToken()): Promise<{ status: number; body: T }> {
    const res = await fetch(new URL(path, this.getBaseUrl()), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = /^application\/(?:[\w.+-]+\+)?json\b/i.test(res.headers.get('content-type') ?? '');
    return { status: res.status, body: (text === '' ? undefined : json ? JSON.parse(text) : text) as T };
  }

  /** Moves the client's clock on by `ms` and runs everything that fell due (AWBs, tracking steps, webhooks). */
  async advanceClock(ms: number, token?: string): Promise<{ now: string }> {
    return this.ok('POST', '/__sandbox/clock/advance', { ms }, token);
  }

  /** Deletes the client's orders, deliveries, journal, fault rules and report. */
  async reset(token?: string): Promise<{ removed: Record<string, number> }> {
    return this.ok('POST', '/__sandbox/reset', undefined, token);
  }

  /** The client's readiness report (JSON; docs/guides/ci-and-readiness.md). */
  async readinessReport<T = { summary: { handled_percent: number; handled: number; graded: number } }>(token?: string): Promise<T> {
    return this.ok('GET', '/__sandbox/report?format=json', undefined, token);
  }

  private async ok<T>(method: string, path: string, body: unknown, token?: string): Promise<T> {
    const res = await this.request<T>(method, path, body, token);
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
    return res.body;
  }
}
