import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { requestLog } from '../../src/http/edge.js';

let server: Server | undefined;
afterEach(() => server?.close());

/** An app behind requestLog: /ok answers, /held never does. Returns its URL and the lines logged. */
async function logged() {
  const info = vi.fn();
  const logger = { child: () => ({ info }), error: vi.fn() } as unknown as Logger;
  const app = express();
  app.use(requestLog(logger));
  app.get('/ok', (_req, res) => void res.status(201).send('ok'));
  app.get('/held', () => undefined);
  server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, info };
}

describe('the request log', () => {
  it('writes one line per answered request, with its status and no aborted flag', async () => {
    const { url, info } = await logged();
    expect((await fetch(`${url}/ok`)).status).toBe(201);
    await vi.waitFor(() => expect(info).toHaveBeenCalledTimes(1), { timeout: 10_000 });
    expect(info.mock.calls[0]![0]).toMatchObject({ method: 'GET', path: '/ok', status: 201 });
    expect(info.mock.calls[0]![0]).not.toHaveProperty('aborted');
  });

  it('writes a line for a request the client gave up on, marked aborted, with no status sent', async () => {
    const { url, info } = await logged();
    const req = request(`${url}/held`);
    req.on('error', () => undefined);
    req.end();
    await new Promise((resolve) => setTimeout(resolve, 50));
    req.destroy();
    await vi.waitFor(() => expect(info).toHaveBeenCalledTimes(1), { timeout: 10_000 });
    expect(info.mock.calls[0]![0]).toMatchObject({ method: 'GET', path: '/held', status: null, aborted: true });
  });
});
