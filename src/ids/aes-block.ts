/** AES's S-box and its round tables (SubBytes, ShiftRows and MixColumns of one column in one look-up), built once. */
const SBOX = new Uint8Array(256);
const T0 = new Uint32Array(256);
const T1 = new Uint32Array(256);
const T2 = new Uint32Array(256);
const T3 = new Uint32Array(256);

/** Multiplication by x in GF(2^8) modulo AES's polynomial. */
const xtime = (a: number): number => ((a << 1) ^ (a & 0x80 ? 0x1b : 0)) & 0xff;

{
  // The S-box from the multiplicative inverse (walked with the generator 3) and the affine map.
  let p = 1;
  let q = 1;
  do {
    p = p ^ xtime(p);
    q ^= q << 1;
    q ^= q << 2;
    q ^= q << 4;
    q &= 0xff;
    if (q & 0x80) q ^= 0x09;
    const rotl = (x: number, s: number) => ((x << s) | (x >> (8 - s))) & 0xff;
    SBOX[p] = q ^ rotl(q, 1) ^ rotl(q, 2) ^ rotl(q, 3) ^ rotl(q, 4) ^ 0x63;
  } while (p !== 1);
  SBOX[0] = 0x63;
  for (let i = 0; i < 256; i += 1) {
    const s = SBOX[i]!;
    const s2 = xtime(s);
    const s3 = s2 ^ s;
    T0[i] = ((s2 << 24) | (s << 16) | (s << 8) | s3) >>> 0;
    T1[i] = ((s3 << 24) | (s2 << 16) | (s << 8) | s) >>> 0;
    T2[i] = ((s << 24) | (s3 << 16) | (s2 << 8) | s) >>> 0;
    T3[i] = ((s << 24) | (s << 16) | (s3 << 8) | s2) >>> 0;
  }
}

/** The last round of one column: SubBytes and ShiftRows of four state words, then the round key. */
const lastRound = (x: number, y: number, z: number, w: number, key: number): number =>
  ((SBOX[x >>> 24]! << 24) | (SBOX[(y >>> 16) & 0xff]! << 16) | (SBOX[(z >>> 8) & 0xff]! << 8) | SBOX[w & 0xff]!) ^ key;

const subWord = (w: number): number => ((SBOX[w >>> 24]! << 24) | (SBOX[(w >>> 16) & 0xff]! << 16) | (SBOX[(w >>> 8) & 0xff]! << 8) | SBOX[w & 0xff]!) >>> 0;

/**
 * AES-128 encryption of single blocks (what ECB mode does to each), written over 32-bit
 * words so that a block's encryption allocates nothing: node's `Cipher.update` makes a
 * Buffer for every block, and the id permutation encrypts eight blocks per id.
 * The state goes in and out as four big-endian words (bytes 0-3 are word 0).
 *
 * @example
 * const aes = new AesBlock(key16);
 * const out = new Uint32Array(4);
 * aes.encrypt(0x01020304, 0, 0, 0, out); // out[0] is the first four bytes of the ciphertext
 */
export class AesBlock {
  /** The 44 words of the expanded key. */
  private readonly keys = new Uint32Array(44);

  constructor(key: Uint8Array) {
    if (key.length !== 16) throw new Error('AES-128 takes a key of 16 bytes');
    const k = this.keys;
    for (let i = 0; i < 4; i += 1) k[i] = ((key[4 * i]! << 24) | (key[4 * i + 1]! << 16) | (key[4 * i + 2]! << 8) | key[4 * i + 3]!) >>> 0;
    let rcon = 1;
    for (let i = 4; i < 44; i += 1) {
      let t = k[i - 1]!;
      if (i % 4 === 0) {
        t = (subWord(((t << 8) | (t >>> 24)) >>> 0) ^ (rcon << 24)) >>> 0;
        rcon = xtime(rcon);
      }
      k[i] = (k[i - 4]! ^ t) >>> 0;
    }
  }

  /** Encrypts the block (w0..w3) into `out`. */
  encrypt(w0: number, w1: number, w2: number, w3: number, out: Uint32Array): void {
    const k = this.keys;
    let a = w0 ^ k[0]!;
    let b = w1 ^ k[1]!;
    let c = w2 ^ k[2]!;
    let d = w3 ^ k[3]!;
    for (let r = 1; r < 10; r += 1) {
      const o = 4 * r;
      const a2 = T0[a >>> 24]! ^ T1[(b >>> 16) & 0xff]! ^ T2[(c >>> 8) & 0xff]! ^ T3[d & 0xff]! ^ k[o]!;
      const b2 = T0[b >>> 24]! ^ T1[(c >>> 16) & 0xff]! ^ T2[(d >>> 8) & 0xff]! ^ T3[a & 0xff]! ^ k[o + 1]!;
      const c2 = T0[c >>> 24]! ^ T1[(d >>> 16) & 0xff]! ^ T2[(a >>> 8) & 0xff]! ^ T3[b & 0xff]! ^ k[o + 2]!;
      const d2 = T0[d >>> 24]! ^ T1[(a >>> 16) & 0xff]! ^ T2[(b >>> 8) & 0xff]! ^ T3[c & 0xff]! ^ k[o + 3]!;
      a = a2;
      b = b2;
      c = c2;
      d = d2;
    }
    out[0] = lastRound(a, b, c, d, k[40]!);
    out[1] = lastRound(b, c, d, a, k[41]!);
    out[2] = lastRound(c, d, a, b, k[42]!);
    out[3] = lastRound(d, a, b, c, k[43]!);
  }
}
