import { describe, expect, it } from 'vitest';
import { Utf8Chunk } from '../../src/store/embedded/file/files.js';

describe('the bytes of a journal line or checkpoint chunk (Utf8Chunk)', () => {
  it('gives the UTF-8 of the texts added since the last take, in order', () => {
    const chunk = new Utf8Chunk(16);
    chunk.add('{"name":"Budi ');
    chunk.add('Santoso – Jl. Setiabudi, 雅加达 🚚"}');
    chunk.add('\n');
    const text = '{"name":"Budi Santoso – Jl. Setiabudi, 雅加达 🚚"}\n';
    expect(chunk.length).toBe(Buffer.byteLength(text));
    expect(chunk.take().toString('utf8')).toBe(text);
    expect(chunk.length).toBe(0);
  });

  it('starts again empty after a take, writing the next bytes over the same buffer', () => {
    const chunk = new Utf8Chunk(64);
    chunk.add('first line\n');
    const first = chunk.take();
    chunk.add('second\n');
    const second = chunk.take();
    expect(second.toString()).toBe('second\n');
    // The view handed out before is the same memory: a writer is done with it before adding more.
    expect(first.buffer).toBe(second.buffer);
    expect(first.toString()).toBe('second\nine\n');
  });

  it('grows for a text longer than its buffer, keeping what was added before', () => {
    const chunk = new Utf8Chunk(8);
    chunk.add('head:');
    const long = 'é'.repeat(10_000);
    chunk.add(long);
    expect(chunk.take().toString('utf8')).toBe(`head:${long}`);
  });

  it('lets go of a buffer grown past 4 MiB once its bytes are taken', () => {
    const chunk = new Utf8Chunk(1024);
    chunk.add('x'.repeat(5 * 1024 * 1024));
    const big = chunk.take();
    expect(big.buffer.byteLength).toBeGreaterThan(4 * 1024 * 1024);
    chunk.add('small');
    const small = chunk.take();
    expect(small.toString()).toBe('small');
    expect(small.buffer.byteLength).toBeLessThan(4 * 1024 * 1024);
    // The big view handed out is untouched by the adds after it.
    expect(big.subarray(0, 5).toString()).toBe('xxxxx');
  });

  it('takes as many bytes as a long ASCII text has, not three a character', () => {
    const chunk = new Utf8Chunk(16);
    const body = 'x'.repeat(100_000);
    chunk.add(body);
    const bytes = chunk.take();
    expect(bytes.length).toBe(100_000);
    expect(bytes.buffer.byteLength).toBeLessThan(150_000);
  });

  it('drops a line it could not finish, so the next starts clean', () => {
    const chunk = new Utf8Chunk(16);
    chunk.add('[{"c":"orders"');
    chunk.clear();
    chunk.add('[]');
    expect(chunk.take().toString()).toBe('[]');
  });
});
