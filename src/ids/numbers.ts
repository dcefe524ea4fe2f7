import { createCipheriv, createHash, type Cipher } from 'node:crypto';

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
  private readonly cipher: Cipher;
  private readonly block = Buffer.alloc(16);

  constructor(keyMaterial: string) {
    const key = createHash('sha256').update(keyMaterial).digest().subarray(0, 16);
    // ECB on one block at a time: each `update` of 16 bytes gives that block's encryption.
    this.cipher = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
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

  /** The round function: 48 bits of the AES encryption of (round, width, half). */
  private round(round: number, digits: number, half: number): number {
    this.block.fill(0);
    this.block[0] = round;
    this.block[1] = digits;
    this.block.writeUIntBE(half, 2, 6);
    return this.cipher.update(this.block).readUIntBE(0, 6);
  }
}
