import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One webhook as the receiver got it. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  /** The raw body, as signed. */
  body: string;
  json: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

/** What the receiver answers to a webhook; `hang` never answers; `delayMs` answers that much later; `after` answers once it settles. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  hang?: boolean;
  delayMs?: number;
  after?: Promise<unknown>;
}

/**
 * A real HTTP webhook receiver on 127.0.0.1 for tests: records every POST and
 * answers what `respond` says (200 by default).
 */
export class Receiver {
  readonly received: Received[] = [];
  respond: (webhook: Received, index: number) => Answer = () => ({ status: 200, body: 'ok' });

  private constructor(private readonly server: Server) {}

  static async start(port = 0): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const webhook: Received = {
          id: String(req.headers['webhook-id']),
          timestamp: String(req.headers['webhook-timestamp']),
          signature: String(req.headers['webhook-signature']),
          body,
          json: JSON.parse(body) as Record<string, unknown>,
          headers: req.headers,
        };
        receiver.received.push(webhook);
        const answer = receiver.respond(webhook, receiver.received.length - 1);
        if (answer.hang) return;
        const reply = () => res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
        if (answer.after) void answer.after.then(reply, reply);
        else if (answer.delayMs) setTimeout(reply, answer.delayMs);
        else reply();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** The webhooks received with this id, in arrival order. */
  byId(id: string): Received[] {
    return this.received.filter((r) => r.id === id);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A port on 127.0.0.1 where nothing listens (a receiver that is down). */
export async function downPort(): Promise<number> {
  const receiver = await Receiver.start();
  const { port } = receiver;
  await receiver.close();
  return port;
}
