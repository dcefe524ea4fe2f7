import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createRequest } from '../support/orders.js';

/**
 * Two clients of the provider, written against the real HTTP API as a partner would
 * write them. `careful` verifies signatures, dedupes by webhook id, reads tracking only
 * after it acknowledged the AWB webhook and once time moved on, honours Retry-After and
 * fixes a request the provider refused. `careless` accepts any signature, polls
 * tracking at once (inside its webhook handler), and sends every failed request again
 * at once, unchanged.
 */
export type Style = 'careful' | 'careless';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class TestClient {
  readonly awbs = new Map<string, string>();
  private readonly seen = new Set<string>();
  /** Order codes whose first webhook the receiver fails (so the sandbox retries it). */
  private readonly failOnce = new Set(['MULTI-1']);
  private server!: Server;
  secret = '';

  constructor(
    readonly style: Style,
    readonly base: string,
    readonly token: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void this.webhook(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>).then(([status, body]) => res.writeHead(status).end(body)));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const set = await this.call('PUT', '/__sandbox/webhook', { url: this.url });
    this.secret = ((await this.call('GET', '/__sandbox/webhook')).body as { secret: string }).secret;
    if (set.status !== 200 || !this.secret) throw new Error(`webhook not set: ${set.status} ${JSON.stringify(set.body)}`);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * One request; `careless` sends any request answered with an error (or no answer) once more
   * at once, unchanged. `timeoutMs` is the first sending's: the one that meets a `hang` gives
   * up, and the one sent again waits for its answer (on a loaded machine it may take longer).
   */
  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number): Promise<{ status: number; body: unknown; headers: Headers }> {
    const once = async (timeoutMs?: number) => {
      try {
        const res = await fetch(`${this.base}${path}`, {
          method,
          headers: { authorization: `Bearer ${this.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
          body: body !== undefined ? JSON.stringify(body) : undefined,
          signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
        });
        const text = await res.text();
        return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as unknown) : text, headers: res.headers };
      } catch {
        return { status: 0, body: null, headers: new Headers() };
      }
    };
    const first = await once(timeoutMs);
    if (this.style === 'careless' && path.startsWith('/v1/') && (first.status === 0 || first.status >= 400)) return once();
    return first;
  }

  /**
   * A provider request the way each client retries: both send again after no answer
   * or a 503; `careful` waits what Retry-After says first. Returns the last answer.
   */
  async withRetry(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number) {
    const first = await this.call(method, path, body, headers, timeoutMs);
    if (this.style === 'careless') return first; // call() already sent it again at once
    if (first.status !== 0 && first.status !== 503) return first;
    const wait = Number(first.headers.get('retry-after') ?? 0) * 1000;
    if (wait > 0) await sleep(wait + 50);
    return this.call(method, path, body, headers);
  }

  /** Creates orders with these order codes (one request). */
  async createCodes(codes: string[], headers: Record<string, string> = {}) {
    const request = createRequest(codes.length);
    request.items.forEach((item, i) => (item.order_code = codes[i]!));
    return this.withRetry('POST', '/v1/order', request, headers);
  }

  track(awb: string, timeoutMs?: number) {
    return this.withRetry('GET', `/v1/order/tracking/${encodeURIComponent(awb)}`, undefined, {}, timeoutMs);
  }

  private async webhook(body: string, headers: Record<string, string>): Promise<[number, string]> {
    let payload: { order_code?: string; awb?: string; order_no?: string };
    if (this.style === 'careful') {
      try {
        payload = new Webhook(this.secret).verify(body, headers) as typeof payload;
      } catch {
        return [400, 'bad signature'];
      }
      const id = headers['webhook-id']!;
      if (this.seen.has(id)) return [200, 'already seen'];
      if (payload.order_code && this.failOnce.delete(payload.order_code)) return [500, 'not yet'];
      this.seen.add(id);
      if (payload.order_no && payload.awb && payload.order_no.startsWith('99') === false) this.awbs.set(payload.order_code!, payload.awb);
      return [200, 'ok'];
    }
    payload = JSON.parse(body) as typeof payload;
    if (payload.order_code && this.failOnce.delete(payload.order_code)) return [500, 'not yet'];
    if (payload.awb) {
      this.awbs.set(payload.order_code!, payload.awb);
      await this.track(payload.awb); // polls at once, before answering the webhook
    }
    return [200, 'ok'];
  }
}
