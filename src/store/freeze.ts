/**
 * Freezes a record and everything in it, so no caller can change a stored value in place.
 * Walks with loops rather than `Object.values`, which builds an array per object: every
 * record written is frozen, so this is on the path of every write.
 */
export function freeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freeze(value[i]);
  } else {
    const record = value as Record<string, unknown>;
    for (const key in record) freeze(record[key]);
  }
  return value;
}
