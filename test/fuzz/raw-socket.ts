import { connect } from 'node:net';

/** Writes bytes to a fresh connection and resolves with everything the server sent before it closed (or `waitMs` passed). */
export function rawExchange(port: number, bytes: string | Buffer, waitMs = 1_500): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(out);
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (d: Buffer) => {
      out += d.toString('latin1');
      // A keep-alive answer is complete once Content-Length bytes of body have arrived.
      const end = out.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(out.slice(0, end));
      if (end >= 0 && length && Buffer.byteLength(out.slice(end + 4), 'latin1') >= Number(length[1])) done();
    });
    socket.on('end', done);
    socket.on('error', done);
    socket.write(bytes);
  });
}

/** Splits a raw HTTP answer into its status, headers (lower-case names) and body. */
export function parseRaw(text: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}
