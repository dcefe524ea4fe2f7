import { createHash, randomBytes } from 'node:crypto';

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * Whether text is a Standard Webhooks secret: `whsec_` + the standard base64 of 24 to 64 bytes,
 * written as the bytes encode (its `=` padding, no stray bits). Node reads base64 without its
 * padding, but Python's and Go's decoders, and the Standard Webhooks libraries on them,
 * refuse it: a secret only Node could use would fail a receiver in another language.
 */
export function isSecret(text: string): boolean {
  const match = SECRET.exec(text);
  if (!match) return false;
  const bytes = Buffer.from(match[1]!, 'base64');
  return bytes.length >= 24 && bytes.length <= 64 && bytes.toString('base64') === match[1];
}

/**
 * A new secret for a client: random, or derived from the seed so that a seeded
 * sandbox prints the same secrets every run.
 *
 * @example makeSecret('client-a', '42') // 'whsec_...' (always the same)
 */
export function makeSecret(clientId: string, seed?: string): string {
  const bytes = seed === undefined ? randomBytes(24) : createHash('sha256').update(`webhook-secret:${seed}:${clientId}`).digest().subarray(0, 24);
  return `whsec_${bytes.toString('base64')}`;
}

/** A well-formed secret that is not the client's: signs the `bad_signature` chaos attempts. */
export function wrongSecret(deliveryId: string): string {
  return `whsec_${createHash('sha256').update(`wrong-key:${deliveryId}`).digest().subarray(0, 24).toString('base64')}`;
}
