import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver that answers 200 to everything and counts what it got. */
export async function okReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A short printable form of a request for failure messages. */
export function describeRequest(req: { method: string; path: string; headers: Record<string, string>; body?: Buffer }): string {
  const body = req.body ? `${req.body.length} bytes: ${req.body.toString('utf8').slice(0, 300)}` : 'no body';
  return `${req.method} ${req.path.slice(0, 300)} headers=${JSON.stringify(req.headers).slice(0, 300)} body=${body}`;
}
