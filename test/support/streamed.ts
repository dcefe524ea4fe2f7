import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** Answers `res` with `bytes` of 'x' in 64 KB pieces, each written once the socket drains, as a listing page or a file is streamed. */
export function streamAnswer(res: ServerResponse, bytes: number): void {
  Readable.from((function* () {
    for (let sent = 0; sent < bytes; sent += 64 * 1024) yield Buffer.alloc(64 * 1024, 'x');
  })()).pipe(res);
}
