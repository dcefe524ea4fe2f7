import { freeze } from '../freeze.js';
import { emptied } from './empty-list.js';
import { copyOf } from './file/index.js';

/**
 * Packs deliveries as the store takes them in: an empty list of attempts or chaos modes
 * is the one shared empty array, and a `last_error` text seen lately is kept once (held
 * deliveries share a few texts, such as "no webhook URL is set" or "Outbox full", which
 * would otherwise be a string of their own on each). Keeps the record's JSON exactly.
 */
export class DeliveryPacker {
  private readonly errors = new Map<string, string>();

  constructor(private readonly errorsKept = 256) {}

  pack(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const delivery = value as Record<string, unknown>;
    const attempts = emptied(delivery.attempts);
    const chaos = emptied(delivery.chaos);
    // Strings compare by value: a text is kept once by setting the known copy, whenever there is one.
    const lastError = typeof delivery.last_error === 'string' ? this.error(delivery.last_error) : undefined;
    if (attempts === delivery.attempts && chaos === delivery.chaos && lastError === undefined) return delivery;
    // A record read from the file or the journal is changed in place and left unfrozen, as
    // OrderPacker leaves it (`stored` then gives one of an older file its version 0); one
    // committed (frozen) is copied. Only the fields that change are set.
    const frozen = Object.isFrozen(delivery);
    const packed = frozen ? copyOf(delivery) : delivery;
    if (attempts !== delivery.attempts) packed.attempts = attempts;
    if (chaos !== delivery.chaos) packed.chaos = chaos;
    if (lastError !== undefined) packed.last_error = lastError;
    return frozen ? freeze(packed) : packed;
  }

  private error(text: string): string {
    const known = this.errors.get(text);
    if (known !== undefined) return known;
    if (this.errors.size >= this.errorsKept) this.errors.delete(this.errors.keys().next().value!);
    this.errors.set(text, text);
    return text;
  }
}
