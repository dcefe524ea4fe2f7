import type { Server } from 'node:http';
import type { Logger } from 'pino';

/** How often, at most, the log says connections are being refused. */
const WARN_EVERY_MS = 60_000;

/**
 * Caps the connections open at once (HTTP and `listen` sessions together): past `max`, Node
 * closes a new connection as it arrives. Without a cap a flood of idle connections takes
 * every file descriptor, and then the data file's writes and the webhooks' own connections
 * fail too, while the log says nothing (libuv closes what it cannot accept without a word).
 * A cap below the descriptors keeps room for them, and each minute with refusals has a
 * warning naming how many and the address most of them came from.
 *
 * @example capConnections(server, 10_000, logger)
 */
export function capConnections(server: Server, max: number, logger: Pick<Logger, 'warn'>): void {
  server.maxConnections = max;
  let dropped = 0;
  let byAddress = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  const report = (): void => {
    timer = undefined;
    if (dropped === 0) return;
    let top: [string, number] = ['', 0];
    for (const entry of byAddress) if (entry[1] > top[1]) top = entry;
    logger.warn(
      { dropped, max_connections: max, top_remote: top[0] || undefined, top_remote_dropped: top[1] },
      `connections refused: ${max} were open (--max-connections); a proxy in front can cap them per address`,
    );
    dropped = 0;
    byAddress = new Map();
    timer = setTimeout(report, WARN_EVERY_MS).unref();
  };
  server.once('close', () => clearTimeout(timer));
  server.on('drop', (data?: { remoteAddress?: string }) => {
    dropped += 1;
    const address = data?.remoteAddress ?? '';
    // Bounded: a flood from many addresses counts the first thousand by address, and all of them in `dropped`.
    if (byAddress.has(address) || byAddress.size < 1_000) byAddress.set(address, (byAddress.get(address) ?? 0) + 1);
    if (timer === undefined) report();
  });
}
