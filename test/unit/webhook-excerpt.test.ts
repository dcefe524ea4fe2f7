import { createServer, type AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { makeSecret } from '../../src/webhooks/secret.js';
import { BAD_RESPONSE } from '../../src/shared/index.js';
import { asJsonWithin, EXCERPT_BYTES, send } from '../../src/webhooks/send.js';

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

describe('asJsonWithin (the answer excerpt kept with each webhook attempt)', () => {
  it('keeps a plain answer as it is', () => {
    expect(asJsonWithin('{"ok":true}\n', EXCERPT_BYTES)).toBe('{"ok":true}\n');
  });

  it.each([
    ['1 KiB of NUL bytes (each a 6-byte escape in JSON)', '\u0000'.repeat(1024)],
    ['1 KiB of quotes and backslashes', '"\\'.repeat(512)],
    ['1 KiB of invalid UTF-8, decoded as U+FFFD', Buffer.alloc(1024, 0xff).toString('utf8')],
    ['emoji', '😀'.repeat(400)],
  ])('writes at most 1 KiB of JSON for %s', (_case, text) => {
    const kept = asJsonWithin(text, EXCERPT_BYTES);
    expect(jsonBytes(kept)).toBeLessThanOrEqual(EXCERPT_BYTES);
    expect(jsonBytes(kept)).toBeGreaterThan(EXCERPT_BYTES - 8);
  });

  it('shows control characters but tab and line breaks as U+FFFD, and never splits a character', () => {
    expect(asJsonWithin('a\u0000b\tc\r\nd\u007f', 100)).toBe('a\uFFFDb\tc\r\nd\uFFFD');
    expect(asJsonWithin('😀😀', 5)).toBe('😀');
  });
});

describe('send (one signed POST) to a receiver that answers a 100 Continue first', () => {
  it('records an error that says why undici could not read the answer (it sends no Expect)', async () => {
    const receiver = createServer((socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const dispatcher = new Agent();
    try {
      const { port } = receiver.address() as AddressInfo;
      const result = await send({ url: `http://127.0.0.1:${port}/hook`, id: 'msg_1', body: '{}', secret: makeSecret('client-a'), timeoutMs: 2000, shutdown: new AbortController().signal, dispatcher });
      expect(result).toMatchObject({ status_code: null, error: `UND_ERR_SOCKET: bad response (${BAD_RESPONSE})` });
      expect(result.error).toContain('100 Continue');
    } finally {
      await dispatcher.close();
      receiver.close();
    }
  });
});
