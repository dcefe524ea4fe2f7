import { hash } from 'node:crypto';

/** A 32-bit hash of any text: stable across runs, used to derive seeded choices. */
export function hash32(text: string): number {
  return hash('sha256', text, 'buffer').readUInt32BE(0);
}

/**
 * A deterministic number in [0, 1) drawn from a seed and a key, so that the same
 * seed and key always give the same draw whatever happened before.
 */
export function draw(seed: string, key: string): number {
  return hash32(`${seed}:${key}`) / 2 ** 32;
}

/** Picks one element of a non-empty list deterministically from a seed and a key. */
export function pick<T>(list: readonly T[], seed: string, key: string): T {
  const item = list[Math.floor(draw(seed, key) * list.length)];
  if (item === undefined) throw new Error('pick() needs a non-empty list');
  return item;
}
