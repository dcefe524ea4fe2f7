import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small round-robin HTTP proxy on 127.0.0.1, as compose.yaml's nginx spreads requests
 * over the replicas: request n goes to upstream n mod count. `served` counts per upstream.
 */
export async function roundRobinProxy(upstreams: string[]): Promise<{ url: string; served: number[]; close(): Promise<void> }> {
  const served = upstreams.map(() => 0);
  let next = 0;
  const server: Server = createServer((req, res) => {
    const index = next++ % upstreams.length;
    served[index]! += 1;
    const target = new URL(req.url ?? '/', upstreams[index]);
    const forward = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
