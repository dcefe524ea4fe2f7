import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** One opening of the listen connection, as the sandbox would see it. */
export interface Opening {
  url: URL;
  headers: IncomingHttpHeaders;
}

/** What the fake sandbox answers an opening with instead of upgrading it (a refused opening is a plain HTTP answer). */
export interface Refusal {
  status: number;
  body: unknown;
}

/**
 * The sandbox's side of the listen protocol, as small as a test needs: records every
 * opening and every message the CLI sends, answers `ready` on each connection, and lets
 * the test send attempts, close or drop the connection, or refuse the opening.
 */
export class ListenServer {
  readonly openings: Opening[] = [];
  readonly messages: Array<Record<string, unknown>> = [];
  readonly sockets: WebSocket[] = [];
  /** The close codes the CLI ended connections with (1000 on Ctrl-C). */
  readonly closes: number[] = [];
  refuse: Refusal | undefined;
  secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

  private constructor(
    private readonly server: Server,
    private readonly wss: WebSocketServer,
  ) {}

  static async start(): Promise<ListenServer> {
    const server = createServer((_req, res) => res.writeHead(404).end());
    const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
    const fake = new ListenServer(server, wss);
    server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://sandbox');
      fake.openings.push({ url, headers: req.headers });
      if (fake.refuse) {
        const body = JSON.stringify(fake.refuse.body);
        socket.end(`HTTP/1.1 ${fake.refuse.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        fake.sockets.push(ws);
        ws.on('message', (data) => fake.messages.push(JSON.parse(data.toString()) as Record<string, unknown>));
        ws.on('close', (code) => fake.closes.push(code));
        const events = url.searchParams.get('events');
        ws.send(JSON.stringify({ type: 'ready', listener: url.searchParams.get('name'), endpoint_id: 'ep_test1', secret: fake.secret, events: events === null ? null : events.split(','), held: 0, now: Date.now() }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The newest connection. */
  get socket(): WebSocket {
    return this.sockets.at(-1)!;
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  /** The CLI's result for an attempt id, once it came. */
  async result(id: string): Promise<Record<string, unknown>> {
    await until(() => this.messages.some((m) => m.id === id));
    return this.messages.find((m) => m.id === id)!;
  }

  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Waits until `check` holds (polling), failing after `ms`. */
export async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not so within ${ms} ms: ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
