import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server on 127.0.0.1 that stands where a sandbox should, answering as slowly as a test needs. */
export interface HeldServer {
  url: string;
  /** The requests it has read, in order (method and path with its query). */
  requests: string[];
  /** Ends every connection it holds, then stops listening. */
  close(): Promise<void>;
}

/**
 * Starts a server that reads each request and answers it as `answer` says; by default it
 * never answers (it takes the connection, reads the request and says nothing, as a hung
 * sandbox or a stuck proxy does).
 *
 * @example
 * const silent = await heldServer();
 * await runTrigger(['awb.generated', '--url', silent.url, '--token', 't', '--timeout', '200ms'], out, err);
 */
export async function heldServer(answer: (req: IncomingMessage, res: ServerResponse) => void = () => {}): Promise<HeldServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Runs a client command and returns its exit code, what it printed, and how long it took. */
export async function timed(run: (out: (text: string) => void, err: (text: string) => void) => Promise<number>): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  let stdout = '';
  let stderr = '';
  const started = performance.now();
  const code = await run((t) => void (stdout += t), (t) => void (stderr += t));
  return { code, stdout, stderr, ms: performance.now() - started };
}
