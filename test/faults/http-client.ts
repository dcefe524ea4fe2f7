import { request } from 'node:http';

/** What a real socket client saw: the status, the body, and when each chunk of it arrived. */
export interface Seen {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Milliseconds from sending until the answer ended. */
  ms: number;
  /** Milliseconds from sending until each body chunk arrived. */
  chunks: number[];
}

/** The error a request ended with, with whatever part of the answer had arrived. */
export class ClientError extends Error {
  constructor(
    readonly code: string,
    readonly ms: number,
    readonly partial: { status?: number; body: string },
  ) {
    super(code);
  }
}

export interface SendOptions {
  method?: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The client gives up after this many ms (error code CLIENT_TIMEOUT). */
  timeoutMs?: number;
  /** The client gives up when this is aborted (error code CLIENT_ABORTED). */
  signal?: AbortSignal;
}

/** Sends one request on a fresh connection, as a client program would. */
export function send(base: string, path: string, options: SendOptions = {}): Promise<Seen> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    let status: number | undefined;
    let body = '';
    const fail = (code: string) => reject(new ClientError(code, elapsed(), { status, body }));
    const req = request(`${base}${path}`, {
      method: options.method ?? 'GET',
      agent: false,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(payload ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
    });
    if (options.timeoutMs !== undefined) req.setTimeout(options.timeoutMs, () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
    options.signal?.addEventListener('abort', () => req.destroy(Object.assign(new Error('client gave up'), { code: 'CLIENT_ABORTED' })), { once: true });
    req.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
    req.on('response', (res) => {
      status = res.statusCode;
      const chunks: number[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        chunks.push(elapsed());
      });
      res.on('aborted', () => fail('ABORTED'));
      res.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, ms: elapsed(), chunks }));
    });
    req.end(payload);
  });
}
