import { withoutNul } from './rows.js';

/** Infinity as a bigint parameter: the largest safe integer (no time or count reaches it). */
export const finite = (n: number): number => (Number.isFinite(n) ? n : n > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER);

/** WHERE clauses built with numbered parameters. */
export class Where {
  readonly clauses: string[] = [];
  readonly values: unknown[] = [];

  add(clause: (p: (value: unknown) => string) => string): this {
    // A filter with a NUL matches nothing stored (stored text has none): compare it as stored.
    this.clauses.push(clause((value) => `$${this.values.push(typeof value === 'string' ? withoutNul(value) : value)}`));
    return this;
  }

  get sql(): string {
    return this.clauses.length > 0 ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}
