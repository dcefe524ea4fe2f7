import { encodeCursor, type Position } from '../cursor.js';
import { freeze } from '../freeze.js';
import type { Page, Stored } from '../../records/index.js';

/** A record as the port gives it: the stored JSON with its version, frozen. */
export function stored<T>(data: unknown, version: number): Stored<T> {
  const record = { ...(data as object), version } as Stored<T>;
  return freeze(record);
}

/** A half of a UTF-16 surrogate pair without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * PostgreSQL text and jsonb cannot hold the NUL character (U+0000) nor half of a
 * surrogate pair (JSON's "\udc00", which JSON.parse accepts), both of which a client's
 * body or a receiver's answer may carry: each is stored as U+FFFD, the replacement
 * character, so the write never fails on it (a failed write would be a 500, and one
 * bad journal entry would fail the batch written with it).
 */
export const withoutNul = (text: string): string => {
  const clean = text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
  return LONE_SURROGATE.test(clean) ? (clean as unknown as { toWellFormed(): string }).toWellFormed() : clean;
};

/** A value as it is stored: every string NUL-free (see withoutNul). */
export function storable<T>(value: T): T {
  if (typeof value === 'string') return withoutNul(value) as T;
  if (Array.isArray(value)) return value.map(storable) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const clean = withoutNul(key);
      // A key `__proto__` (JSON.parse makes it an own key) is kept as one, not taken as the copy's prototype.
      if (clean === '__proto__') Object.defineProperty(out, clean, { value: storable(child), enumerable: true, writable: true, configurable: true });
      else out[clean] = storable(child);
    }
    return out as T;
  }
  return value;
}

/** What JSON.stringify writes for a NUL or half of a surrogate pair (it writes every lone half as an escape). */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * The JSON text of `storable(value)`, for a parameter sent as text: the value is written
 * once, and walked and copied only when its text holds a NUL or half a surrogate pair (a
 * text that escapes a backslash before `u0000` is walked too, for nothing). Batches of
 * journal entries and report observations are written this way on every request.
 */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  return UNSTORABLE_ESCAPE.test(text) ? JSON.stringify(storable(value)) : text;
}

/**
 * The record without its version, as the `data` column takes it: the record NUL-free and
 * its JSON text, sent as the parameter (the driver would write the object's text itself).
 * The record is written once; it is walked and copied only when its text holds a NUL or
 * half a surrogate pair (see storableJson). The port gives the record back frozen, with
 * what it holds, as the embedded store does.
 */
export function dataOf<T extends object>(record: T): { data: Omit<T, 'version'>; json: string } {
  const { version: _version, ...data } = record as T & { version?: number };
  const json = JSON.stringify(data);
  if (!UNSTORABLE_ESCAPE.test(json)) return { data, json };
  const clean = storable(data);
  return { data: clean, json: JSON.stringify(clean) };
}

/** A page from rows fetched with one more than the limit: the extra row says there is a next page. */
export function pageOf<T>(rows: Array<{ data: unknown; version: number }>, limit: number, total: number, position: (record: Stored<T>) => Position): Page<Stored<T>> {
  const items = rows.slice(0, limit).map((row) => stored<T>(row.data, row.version));
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeCursor(position(last)) : null, total };
}
