import { createServer, request, type Server } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A small round-robin HTTP proxy on 127.0.0.1, as compose.yaml's nginx spreads requests
 * over the replicas: request n goes to upstream n mod count. `served` counts per upstream.
 * An upgrade (the listen WebSocket) is passed through to its upstream as raw bytes both ways,
 * as nginx does with `proxy_http_version 1.1` and the Upgrade/Connection headers.
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
  const tunnels = new Set<Duplex | Socket>();
  server.on('upgrade', (req, socket, head) => {
    const index = next++ % upstreams.length;
    served[index]! += 1;
    const target = new URL(upstreams[index]!);
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    for (const end of [socket, upstream]) {
      tunnels.add(end);
      end.on('close', () => tunnels.delete(end));
    }
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () =>
      new Promise((resolve) => {
        for (const end of tunnels) end.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A TCP proxy on 127.0.0.1 to `port` that delays every chunk by `delayMs` each way (a
 * database far away, or overloaded). `dropAll` ends every connection through it, as a
 * network blip does; `delayMs` may be changed while it runs.
 */
export async function slowTcpProxy(port: number, delayMs: number): Promise<{ port: number; delayMs: number; dropAll(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const proxy = {
    port: 0,
    delayMs,
    dropAll: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise<void>((resolve) => {
      proxy.dropAll();
      server.close(() => resolve());
    }),
  };
  const pipe = (from: Socket, to: Socket) => from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), proxy.delayMs));
  const server = createNetServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  return proxy;
}
