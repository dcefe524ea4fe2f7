import { hash32 } from './random.js';

/**
 * Maps a counter to a number of `digits` digits that looks random but is unique:
 * an affine permutation of [0, 10^digits) whose constants come from the seed.
 * The same seed and counter always give the same number.
 *
 * @example permute(1, 8, 'seed') // e.g. 48213907
 */
export function permute(counter: number, digits: number, seed: string): bigint {
  const { a, b, modulus } = constantsOf(digits, seed);
  return (BigInt(counter) * a + b) % modulus;
}

/** The constants by seed, then by width: looked up without building a key (every order number, batch id and AWB looks them up). */
const constants = new Map<string, Map<number, { a: bigint; b: bigint; modulus: bigint }>>();

/** The permutation's constants for a seed and a width, derived once. */
function constantsOf(digits: number, seed: string): { a: bigint; b: bigint; modulus: bigint } {
  let ofSeed = constants.get(seed);
  if (!ofSeed) {
    ofSeed = new Map();
    constants.set(seed, ofSeed);
  }
  let found = ofSeed.get(digits);
  if (!found) {
    let a = BigInt(hash32(`${seed}:a:${digits}`)) * 2n + 1n; // odd
    if (a % 5n === 0n) a += 2n; // coprime with 10^digits
    found = { a, b: BigInt(hash32(`${seed}:b:${digits}`)), modulus: 10n ** BigInt(digits) };
    ofSeed.set(digits, found);
  }
  return found;
}

/** `permute` written as text of exactly `digits` digits, zero-padded. */
export function permutedText(counter: number, digits: number, seed: string): string {
  return permute(counter, digits, seed).toString().padStart(digits, '0');
}
