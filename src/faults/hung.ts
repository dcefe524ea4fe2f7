import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Response } from 'express';
import type { Reply } from '../http/handler.js';

const WATCH_MS = 200;

/**
 * Requests held open by `hang` faults. A hung request ends when its client gives up;
 * `close()` (module shutdown) destroys the rest, and so does the server stopping to
 * listen, since a server waits for open requests before it closes.
 */
export class HungRequests {
  private readonly open = new Set<Response>();
  private watch: NodeJS.Timeout | undefined;

  get size(): number {
    return this.open.size;
  }

  /** Never answers; resolves once the connection is gone. */
  hold(res: Response): Promise<Reply> {
    this.open.add(res);
    this.watch ??= setInterval(() => this.sweep(), WATCH_MS).unref();
    return new Promise((resolve) => {
      res.once('close', () => {
        this.open.delete(res);
        if (this.open.size === 0) this.stopWatch();
        resolve({ streamed: true });
      });
    });
  }

  /** Destroys every hung connection. */
  close(): void {
    for (const res of this.open) res.socket?.destroy();
    this.open.clear();
    this.stopWatch();
  }

  private sweep(): void {
    for (const res of this.open) {
      const server = (res.socket as (Socket & { server?: Server }) | null)?.server;
      if (server && !server.listening) res.socket?.destroy();
    }
  }

  private stopWatch(): void {
    clearInterval(this.watch);
    this.watch = undefined;
  }
}
