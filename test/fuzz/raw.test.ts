import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { parseRaw, rawExchange } from './raw-socket.js';

const TOKEN = 'raw-client';
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ clock: 'manual', tokens: [TOKEN], maxHeaderSize: 8_192 });
});
afterAll(() => sandbox.close());

const auth = `Authorization: Bearer ${TOKEN}\r\n`;
const big = 'x'.repeat(10_000);
/** Bytes no HTTP client library would send: they must be answered with the envelope (or the app's own 4xx), never crash or hang the server. */
const cases: Array<[string, string | Buffer, number[]]> = [
  ['a NUL byte in a header value', `GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n`, [400]],
  ['a NUL byte in the path', `GET /v1/order/tracking/a\0b HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, [400]],
  ['%00 in the path', `GET /v1/order/tracking/a%00b HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, [400]],
  ['an encoded slash and dot-dot in the path', `GET /v1/order/tracking/..%2F..%2Fetc%2Fpasswd HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, [400]],
  ['a raw dot-dot path', `GET /v1/order/tracking/../../../etc/passwd HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, [404]],
  ['a malformed percent-encoding', `GET /v1/order/%E0%A4%A HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, [400]],
  ['raw UTF-8 bytes in the path', Buffer.from(`GET /v1/order/tracking/ÄÖ🚚 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 'utf8'), [400]],
  ['a garbage request line', 'GARBAGE\r\n\r\n', [400]],
  ['a header name with a space', `GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n`, [400]],
  ['a bare CR in a header value', `GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n`, [400]],
  ['a Content-Length that is not a number', `POST /v1/order HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`, [400]],
  ['both Content-Length and Transfer-Encoding (request smuggling)', `POST /v1/order HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, [400]],
  ['headers above --max-header-size', `GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`, [431]],
  ['a query above --max-header-size', `GET /v1/area/search?q=${big} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, [431]],
  ['a chunked body with a bad chunk size', `POST /v1/order HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`, [400]],
];

describe('requests that no HTTP client library would send', () => {
  it.each(cases)('answers %s with the error envelope and keeps serving', async (_, bytes, statuses) => {
    const answer = parseRaw(await rawExchange(sandbox.port, bytes));
    expect(statuses).toContain(answer.status);
    expect(answer.headers['content-type']).toContain('application/json');
    const body = JSON.parse(answer.body.slice(0, Number(answer.headers['content-length'] ?? answer.body.length)));
    expect(body).toEqual({ success: false, message: expect.any(String), errors: expect.any(Array) });
    expect((await fetch(`${sandbox.url}/__sandbox/health`)).status).toBe(200);
  });

  it('names the header limit in the 431 message', async () => {
    const answer = parseRaw(await rawExchange(sandbox.port, `GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`));
    expect(JSON.parse(answer.body).message).toContain('8192 bytes');
  });

  it('answers a HEAD request above the header limit with no body, so a keep-alive client is not confused', async () => {
    const answer = parseRaw(await rawExchange(sandbox.port, `HEAD /__sandbox/health HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.body).toBe('');
  });

  it('prints its figures', () => {
    console.log(`[fuzz:raw] ${cases.length + 2} hand-made malformed requests, answers 400/404/431 with the envelope, 5xx 0, server answering after each`);
  });
});
