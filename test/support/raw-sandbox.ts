import net from 'node:net';
import { afterEach } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import type { SandboxOptions } from '../../src/config/options.js';
import { databaseFor, onPostgres, releaseDatabase } from './store-kind.js';

/** A sandbox for tests that speak HTTP on sockets of their own, and those sockets. */
export interface RawSandbox {
  /** Starts the sandbox on 127.0.0.1 with a manual clock and no log, on the store the run tests; its port. */
  start(options: SandboxOptions): Promise<number>;
  /** The sandbox started last. */
  readonly sandbox: Sandbox;
  /** A socket connected to `port`; its errors are ignored (a test reads what it received and whether it closed). */
  connect(port: number): Promise<net.Socket>;
}

/**
 * A sandbox on the store the run tests (a database of its own on PostgreSQL). After each
 * test, the sockets it opened are destroyed, then the sandbox is closed and its database
 * released.
 */
export function rawSandbox(): RawSandbox {
  let started: Sandbox | undefined;
  let database: string | undefined;
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await started?.close();
    started = undefined;
    if (database) await releaseDatabase(database);
    database = undefined;
  });
  return {
    async start(options) {
      database = onPostgres ? (await databaseFor(undefined)).url : undefined;
      started = await createSandbox({ host: '127.0.0.1', port: 0, clock: 'manual', logLevel: 'silent', ...options, ...(database ? { databaseUrl: database } : {}) });
      return Number(new URL(started.url).port);
    },
    get sandbox() {
      if (started === undefined) throw new Error('the sandbox was not started');
      return started;
    },
    async connect(port) {
      const socket = net.connect(port, '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      return socket;
    },
  };
}
