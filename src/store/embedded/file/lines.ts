import { createReadStream } from 'node:fs';

const NEWLINE = 0x0a;

/** Where a file's complete lines end, and its size: bytes past `end` are a line cut short. */
export interface LinesRead {
  end: number;
  size: number;
}

/**
 * Reads a file as a stream and hands each complete (newline-terminated) line to
 * `onLine`, with its 1-based number, so a file of any size is read with a line's worth
 * of memory. Text after the last newline is not handed over: `end` tells where it starts.
 */
export async function readLines(path: string, onLine: (line: string, number: number) => void): Promise<LinesRead> {
  let carry: Buffer[] = []; // the start of a line that spans chunks
  let number = 0;
  let size = 0;
  let end = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      number += 1;
      const line = carry.length > 0 ? Buffer.concat([...carry, chunk.subarray(start, nl)]).toString('utf8') : chunk.toString('utf8', start, nl);
      carry = [];
      end = size + nl + 1;
      onLine(line, number);
      start = nl + 1;
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
    size += chunk.length;
  }
  return { end, size };
}
