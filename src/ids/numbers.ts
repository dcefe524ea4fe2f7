import { createHash } from 'node:crypto';
import { AesBlock } from './aes-block.js';

/** Rounds of the Feistel network: eight, as format-preserving encryption (FF1, FF3) uses for numbers this wide. */
const ROUNDS = 8;

/**
 * A keyed pseudo-random permutation of the numbers of `digits` digits: a Feistel network
 * over the number split in two (its high and low digits), each round adding to one half an
 * AES-128 encryption of the other, so the numbers a counter gives look random and consecutive
 * ones share nothing. Without the key, ids tell nothing of the counter behind them (how many
 * were made in between, by whom), unlike an affine map, whose constant step two ids reveal.
 * The same key and counter always give the same number; distinct counters, distinct numbers.
 *
 * @example new KeyedPermutation('seed:client-a:order').text(1, 11) // e.g. '48213907561'
 */
export class KeyedPermutation {
  private readonly aes: AesBlock;
  /** The encrypted block of the last round, reused by every round. */
  private readonly out = new Uint32Array(4);

  constructor(keyMaterial: string) {
    this.aes = new AesBlock(createHash('sha256').update(keyMaterial).digest().subarray(0, 16));
  }

  /** The counter's number in [0, 10^digits). */
  apply(counter: number, digits: number): number {
    const high = 10 ** Math.floor(digits / 2);
    const low = 10 ** Math.ceil(digits / 2);
    const n = counter % (high * low);
    let left = Math.floor(n / low);
    let right = n % low;
    for (let round = 0; round < ROUNDS; round += 1) {
      if (round % 2 === 0) left = (left + this.round(round, digits, right)) % high;
      else right = (right + this.round(round, digits, left)) % low;
    }
    return left * low + right;
  }

  /** `apply` written as text of exactly `digits` digits, zero-padded. */
  text(counter: number, digits: number): string {
    return String(this.apply(counter, digits)).padStart(digits, '0');
  }

  /**
   * The round function: the first 48 bits of the AES encryption of the block that holds
   * the round (byte 0), the width (byte 1) and the half as 48 bits big-endian (bytes 2-7),
   * zeros after.
   */
  private round(round: number, digits: number, half: number): number {
    const high = Math.floor(half / 2 ** 32);
    this.aes.encrypt(((round << 24) | (digits << 16) | (high & 0xffff)) >>> 0, half >>> 0, 0, 0, this.out);
    return this.out[0]! * 2 ** 16 + (this.out[1]! >>> 16);
  }
}
