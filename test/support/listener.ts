import WebSocket from 'ws';

/** What the server sent once the session opened. */
export interface Ready {
  type: 'ready';
  listener: string;
  endpoint_id: string;
  secret: string;
  events: string[] | null;
  held: number;
}

/** An attempt as the server sent it. */
export interface AttemptMessage {
  type: 'attempt';
  id: string;
  delivery_id: string;
  event: string;
  order_no: string | null;
  timeout_ms: number;
  headers: Record<string, string>;
  body: string;
  chaos?: string;
  /** The endpoint's signing secret as the attempt was made. */
  secret?: string;
}

/** A refused opening: the plain HTTP answer. */
export interface Refused {
  status: number;
  body: { success: false; message: string; errors: Array<{ field: string; message: string }> };
}

/**
 * A small client of the listen protocol for tests (docs/decisions/0009-listen.md): opens
 * `GET /__sandbox/listen`, forwards each attempt to `forwardTo` with its exact headers and
 * body, and answers the result, as `shipping-sandbox listen` does.
 */
export class TestListener {
  readonly attempts: AttemptMessage[] = [];
  closeCode: number | undefined;
  readonly closed: Promise<number>;
  /** Set to answer attempts by hand instead of forwarding (undefined result: no answer). */
  answer: ((attempt: AttemptMessage) => Promise<Record<string, unknown> | undefined>) | undefined;

  private constructor(
    readonly ws: WebSocket,
    readonly ready: Ready,
    private readonly forwardTo: string | undefined,
  ) {
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve((this.closeCode = code))));
    ws.on('message', (data) => void this.onMessage(String(data)));
  }

  /** Opens a session; resolves once `ready` came, or with the refusal. */
  static async open(base: string, options: { token?: string; name: string; events?: string; forwardTo?: string; client?: string; query?: string }): Promise<TestListener | Refused> {
    const query = options.query ?? `name=${encodeURIComponent(options.name)}${options.events !== undefined ? `&events=${encodeURIComponent(options.events)}` : ''}`;
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (options.client !== undefined) headers['x-sandbox-client'] = options.client;
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/__sandbox/listen?${query}`, { headers });
    return new Promise((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Refused['body'] }));
      });
      ws.once('error', reject);
      ws.once('message', (data) => {
        const ready = JSON.parse(String(data)) as Ready;
        resolve(new TestListener(ws, ready, options.forwardTo));
      });
    });
  }

  private async onMessage(text: string): Promise<void> {
    const message = JSON.parse(text) as { type: string };
    if (message.type !== 'attempt') return;
    const attempt = message as AttemptMessage;
    this.attempts.push(attempt);
    const result = this.answer ? await this.answer(attempt) : await this.forward(attempt);
    if (result && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'result', id: attempt.id, ...result }));
  }

  private async forward(attempt: AttemptMessage): Promise<Record<string, unknown>> {
    const started = performance.now();
    try {
      const res = await fetch(this.forwardTo!, { method: 'POST', headers: attempt.headers, body: attempt.body, redirect: 'manual', signal: AbortSignal.timeout(attempt.timeout_ms) });
      const body = (await res.text()).slice(0, 1024);
      return { status_code: res.status, duration_ms: Math.round(performance.now() - started), error: null, response_body: body, retry_after: res.headers.get('retry-after') };
    } catch (error) {
      return { status_code: null, duration_ms: Math.round(performance.now() - started), error: (error as Error).message, response_body: '', retry_after: null };
    }
  }

  /** Ends the session as a killed CLI would: the TCP connection dropped, no close frame. */
  kill(): Promise<number> {
    this.ws.terminate();
    return this.closed;
  }

  close(): Promise<number> {
    this.ws.close();
    return this.closed;
  }
}

export const isRefused = (x: TestListener | Refused): x is Refused => !(x instanceof TestListener);
