import type { JournalOp } from './types.js';

/**
 * The fields of `after` that are not those of `before`, when the journal may carry a
 * record's change as them: both are records frozen whole (so a field that is the same
 * value or object in both has the same JSON), and `after` has every field of `before`, in
 * the same order, new ones after them (so `{...before, ...patch}` at replay has the same
 * JSON as `after`, key order included). Otherwise undefined: the whole record is journaled.
 * An order that gets its AWB is then journaled as its new fields, not again whole with its
 * sender and item.
 */
export function patchOf(before: unknown, after: unknown): Record<string, unknown> | undefined {
  if (typeof before !== 'object' || before === null || typeof after !== 'object' || after === null) return undefined;
  if (Array.isArray(before) || Array.isArray(after) || !Object.isFrozen(before) || !Object.isFrozen(after)) return undefined;
  // Plain records only: an instance may have a toJSON of its own, or state a freeze does not cover (a Date).
  if (!isPlain(before) || !isPlain(after)) return undefined;
  const was = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const keys = Object.keys(was);
  const patch: Record<string, unknown> = {};
  let i = 0;
  for (const key in now) {
    if (!Object.hasOwn(now, key)) return undefined;
    const value = now[key];
    if (i < keys.length) {
      if (keys[i] !== key) return undefined;
      i += 1;
      if (value === was[key]) continue;
      // A field that is undefined is not in the JSON: one that comes or goes would move or stay at replay.
      if (value === undefined || was[key] === undefined) return undefined;
    } else if (value === undefined) continue;
    // Assigning "__proto__" would set the patch's prototype rather than a field.
    if (key === '__proto__') return undefined;
    patch[key] = value;
  }
  return i === keys.length ? patch : undefined;
}

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

/** The journal's op for a record put (`after` undefined: removed): its new fields when it can carry them (see patchOf), else the whole record. */
export function opOf(c: string, k: string, before: unknown, after: unknown): JournalOp {
  if (after === undefined) return { c, k, d: 1 };
  const patch = patchOf(before, after);
  return patch === undefined ? { c, k, v: after } : { c, k, p: patch };
}
