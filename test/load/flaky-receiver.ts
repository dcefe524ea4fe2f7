import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One webhook request as the receiver saw it, and how it answered. */
export interface Hit {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** 200, 503, or null when the receiver dropped the connection. */
  answered: number | null;
  /** When the receiver answered (or dropped it), in wall-clock ms. */
  at: number;
}

/** A deterministic generator in [0, 1) (mulberry32), so a run fails the same requests every time. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A webhook receiver that fails `failRate` of the requests it gets: two thirds of
 * the failures answer 503, one third drop the connection without an answer.
 */
export class FlakyReceiver {
  readonly hits: Hit[] = [];
  private readonly next: () => number;

  private constructor(
    private readonly server: Server,
    readonly failRate: number,
    seed: number,
  ) {
    this.next = random(seed);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const draw = this.next();
        const answered = draw < failRate * (2 / 3) ? 503 : draw < failRate ? null : 200;
        const header = (name: string) => String(req.headers[name] ?? '');
        this.hits.push({ id: header('webhook-id'), timestamp: header('webhook-timestamp'), signature: header('webhook-signature'), body: Buffer.concat(chunks).toString('utf8'), answered, at: Date.now() });
        if (answered === null) req.socket.destroy();
        else res.writeHead(answered).end(answered === 200 ? 'ok' : 'try again');
      });
    });
  }

  static async start(failRate: number, seed: number): Promise<FlakyReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new FlakyReceiver(server, failRate, seed);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  get failures(): number {
    return this.hits.filter((h) => h.answered !== 200).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A port that was free a moment ago, for a server that must come back on the same port after each restart. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
