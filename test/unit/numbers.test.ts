import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AesBlock } from '../../src/ids/aes-block.js';
import { IdFactory } from '../../src/ids/index.js';
import { KeyedPermutation } from '../../src/ids/numbers.js';

/** What the permutation gave for these counters when each round was node's `aes-128-ecb` Cipher. */
const EXPECTED_ORDER_NUMBERS = ['33545798594', '65902835974', '59877268076', '72041879234', '23877303306'];

describe('AesBlock', () => {
  const encrypt = (key: Buffer, block: Buffer): Buffer => {
    const out = new Uint32Array(4);
    new AesBlock(key).encrypt(block.readUInt32BE(0), block.readUInt32BE(4), block.readUInt32BE(8), block.readUInt32BE(12), out);
    const bytes = Buffer.alloc(16);
    out.forEach((word, i) => bytes.writeUInt32BE(word, 4 * i));
    return bytes;
  };

  it("gives FIPS-197's example ciphertext", () => {
    const key = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    expect(encrypt(key, Buffer.from('00112233445566778899aabbccddeeff', 'hex')).toString('hex')).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
  });

  it("gives node's AES-128 encryption of random blocks under random keys", () => {
    for (let i = 0; i < 200; i += 1) {
      const key = randomBytes(16);
      const block = randomBytes(16);
      const expected = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false).update(block);
      expect(encrypt(key, block).toString('hex')).toBe(expected.toString('hex'));
    }
  });
});

describe('KeyedPermutation', () => {
  it('gives the numbers it gave with node\'s cipher (ids of a seed stay the same)', () => {
    const permutation = new KeyedPermutation('ids:5:bench:20:client_7137e16f75a1:order');
    expect([0, 1, 2, 1234567, 99_999_999_999].map((n) => permutation.text(n, 11))).toEqual(EXPECTED_ORDER_NUMBERS);
  });

  it('never gives two counters the same number', () => {
    const permutation = new KeyedPermutation('seed');
    const seen = new Set<number>();
    for (let i = 0; i < 20_000; i += 1) seen.add(permutation.apply(i, 5));
    expect(seen.size).toBe(20_000);
    for (const n of seen) expect(n >= 0 && n < 100_000).toBe(true);
  });

  it('is a permutation of the whole range, for an even and an odd width', () => {
    for (const digits of [4, 5]) {
      const permutation = new KeyedPermutation(`whole-${digits}`);
      const seen = new Set(Array.from({ length: 10 ** digits }, (_, i) => permutation.apply(i, digits)));
      expect(seen.size).toBe(10 ** digits);
    }
  });

  it('is the same for the same key and different for another key', () => {
    expect(new KeyedPermutation('a').apply(42, 11)).toBe(new KeyedPermutation('a').apply(42, 11));
    expect(new KeyedPermutation('a').apply(42, 11)).not.toBe(new KeyedPermutation('b').apply(42, 11));
  });

  it('writes exactly the number of digits asked for', () => {
    const permutation = new KeyedPermutation('s');
    for (let i = 0; i < 100; i += 1) expect(permutation.text(i, 10)).toMatch(/^\d{10}$/);
  });
});

describe('ids of one client tell nothing of the counter behind them', () => {
  const ids = new IdFactory('shared-deployment-seed');

  it('steps between consecutive counters differ (an affine numbering gives one constant step)', () => {
    const numbers = Array.from({ length: 50 }, (_, i) => Number(ids.orderNumberOf(i + 1, 'partner-b')));
    const steps = new Set(numbers.slice(1).map((n, i) => (n - numbers[i]! + 1e11) % 1e11));
    expect(steps.size).toBe(49);
  });

  it('from two of its own ids a partner cannot predict the ids between them: they are not on its line', () => {
    // B's counters 1 and 4; A took 2 and 3. With an affine map, A's numbers were B's first + k × step.
    const [b1, b4] = [ids.orderNumberOf(1, 'partner-b'), ids.orderNumberOf(4, 'partner-b')].map(Number);
    const step = ((b4! - b1! + 3e11) / 3) % 1e11;
    const predicted = [1, 2].map((k) => String(Math.round((b1! + k * step) % 1e11)).padStart(11, '0'));
    const actual = [2, 3].map((n) => ids.orderNumberOf(n, 'partner-a').slice(1));
    expect(actual.some((id) => predicted.includes(id))).toBe(false);
  });

  it('are reproducible under one seed, differ per client and per kind, and keep their formats', () => {
    expect(new IdFactory('s').orderNumberOf(7, 'a')).toBe(new IdFactory('s').orderNumberOf(7, 'a'));
    expect(ids.orderNumberOf(7, 'a')).not.toBe(ids.orderNumberOf(7, 'b'));
    expect(ids.orderNumberOf(7, 'a')).toMatch(/^5\d{11}$/);
    expect(ids.batchIdOf(7, 'a')).toMatch(/^7\d{11}$/);
    expect(ids.awbOf({ code: 'jne', awb_prefix: 'JN', awb_digits: 10 }, 7, 'a')).toMatch(/^JN\d{10}$/);
  });
});
