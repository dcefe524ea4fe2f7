/**
 * A listen session's opening, checked before its endpoint is written: the WebSocket
 * handshake (every request the WebSocket library would refuse with its own 400 is refused
 * here first, with the envelope naming the header, so that a refused handshake creates no
 * listener endpoint) and the bound on a client's opens.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from './errors.js';

/** The answer to a request of LISTEN_PATH without its upgrade: the 400 naming the header. */
export const withoutUpgrade = (): ApiError => new ApiError(400, 'GET /__sandbox/listen opens a WebSocket: send Upgrade: websocket.', [{ field: 'header.upgrade', message: 'must be "websocket"' }]);

/** A Sec-WebSocket-Key as RFC 6455 has it (the base64 of 16 bytes), the check the WebSocket library makes. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/** A subprotocol name is an HTTP token (RFC 9110); a list of them is separated by commas, with blanks around each comma. */
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const PROTOCOL_LIST = new RegExp(`^${TOKEN}(?:[ \\t]*,[ \\t]*${TOKEN})*$`);

/** A Sec-WebSocket-Protocol the WebSocket library takes: a list of tokens, none twice. */
function protocolsValid(value: string): boolean {
  if (!PROTOCOL_LIST.test(value)) return false;
  const names = value.split(',').map((name) => name.trim());
  return new Set(names).size === names.length;
}

/** The WebSocket handshake's own checks, made before anything is written: throws the 400 naming the header (or the method). */
export function checkHandshake(req: IncomingMessage): void {
  if (req.headers.upgrade?.toLowerCase() !== 'websocket') throw withoutUpgrade();
  if (req.method !== 'GET') throw new ApiError(400, 'A listen session opens with GET /__sandbox/listen.', [{ field: 'method', message: 'must be GET' }]);
  if (!WEBSOCKET_KEY.test(req.headers['sec-websocket-key'] ?? '')) throw new ApiError(400, 'GET /__sandbox/listen opens a WebSocket: send a Sec-WebSocket-Key (the base64 of 16 random bytes).', [{ field: 'header.sec-websocket-key', message: 'must be the base64 of 16 bytes' }]);
  const version = req.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') throw new ApiError(400, 'GET /__sandbox/listen opens a WebSocket: send Sec-WebSocket-Version: 13.', [{ field: 'header.sec-websocket-version', message: 'must be 13' }]);
  const protocols = req.headers['sec-websocket-protocol'];
  if (protocols !== undefined && !protocolsValid(protocols)) {
    throw new ApiError(400, 'GET /__sandbox/listen opens a WebSocket: its Sec-WebSocket-Protocol must be a list of names separated by commas, none twice (listen sends none).', [{ field: 'header.sec-websocket-protocol', message: 'must be a comma-separated list of distinct tokens' }]);
  }
}

/** Listen opens a client may make at once, and then a second, on one replica. */
export const LISTEN_OPENS = { burst: 20, perSecond: 5 };

/**
 * A token bucket of listen opens per client, on this replica: each open writes the
 * client's endpoints (its listener's, seen now), so a partner opening and dropping
 * sessions in a loop filled the journal and slowed every partner's writes. A client
 * opens up to LISTEN_OPENS.burst sessions at once (its ten listeners, reconnecting after
 * a restart), then LISTEN_OPENS.perSecond a second; past that an open is a 429 with
 * Retry-After (listen tries again with its backoff). `--rate-limit`, when set, counts the
 * opens too.
 */
export class ListenOpens {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly wallClock: () => number = Date.now) {}

  /** Counts an open of the client; throws the 429 past the bucket. */
  take(clientId: string): void {
    const now = this.wallClock();
    const { burst, perSecond } = LISTEN_OPENS;
    const bucket = this.buckets.get(clientId) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    if (tokens < 1) {
      throw new ApiError(429, `This client opened more than ${burst} listen sessions at once, or ${perSecond} a second since; try again in a second (shipping-sandbox listen does).`, [], { 'Retry-After': '1' });
    }
    // One entry per client that ever opened one: the configured clients, no more.
    this.buckets.set(clientId, { tokens: tokens - 1, at: now });
  }
}
