import { Agent, request } from 'node:http';

/** One request as the fuzzer sends it: the path is sent as is (already encoded, or deliberately not). */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as text; empty for an event stream (the fuzzer hangs up after the status). */
  text: string;
}

/**
 * A keep-alive HTTP/1.1 client for many small requests to one server: faster than
 * fetch, and it sends paths and bodies byte for byte. A stream (`text/event-stream`)
 * is cut right after its status line, which also exercises the server's disconnect path.
 */
export class KeepAliveClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  requests = 0;

  constructor(
    private readonly base: URL,
    private readonly timeoutMs = 10_000,
  ) {}

  send(req: RawRequest): Promise<RawResponse> {
    this.requests++;
    return new Promise((resolve, reject) => {
      const outgoing = request(
        { agent: this.agent, host: this.base.hostname, port: this.base.port, method: req.method, path: req.path, headers: { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) } },
        (res) => {
          const headers = res.headers;
          if (String(headers['content-type'] ?? '').startsWith('text/event-stream')) {
            res.destroy();
            resolve({ status: res.statusCode ?? 0, headers, text: '' });
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      outgoing.setTimeout(this.timeoutMs, () => outgoing.destroy(new Error(`no answer within ${this.timeoutMs} ms: ${req.method} ${req.path.slice(0, 200)}`)));
      outgoing.on('error', reject);
      outgoing.end(req.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
