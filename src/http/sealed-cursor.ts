import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { notACursor } from '../shared/index.js';

/** A sealed cursor's text is padded with NULs (a store's cursor never holds one) to a multiple of this. */
const PAD = 96;

/**
 * Seals a listing's cursor (AES-256-GCM under a key of the deployment's secret), so that it
 * is opaque to the client that holds it: the delivery log pages by a rank all clients'
 * deliveries share (a sequence on the embedded store, the database's clock on PostgreSQL),
 * and read from a cursor it told one partner how many webhooks the others were sent.
 * Every replica holds the same secret (the store's seed), so a cursor one gave another
 * opens; one that does not open is a 400 naming `cursor`. A cursor is sealed for its
 * client (its id authenticated with it): another client's does not open, so it cannot page
 * from a competitor's place in the shared sequence.
 */
export class CursorSeal {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHash('sha256').update(`listing-cursor:${secret}`).digest();
  }

  seal(cursor: string, clientId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(clientId, 'utf8'));
    // Padded to a multiple of PAD bytes: a sealed text keeps its length, and the number's digits would show in it.
    const text = Buffer.from(cursor, 'utf8');
    const padded = Buffer.concat([text, Buffer.alloc(PAD - (text.length % PAD))]);
    const sealed = Buffer.concat([cipher.update(padded), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The store's cursor inside a sealed one; a RuleViolation naming `cursor` when it is not one this deployment sealed for this client. */
  open(cursor: string, clientId: string): string {
    const bytes = Buffer.from(cursor, 'base64url');
    try {
      if (bytes.length <= 28) throw new Error('too short');
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      decipher.setAAD(Buffer.from(clientId, 'utf8'));
      const padded = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
      return padded.subarray(0, padded.indexOf(0)).toString('utf8');
    } catch {
      throw notACursor();
    }
  }
}
