/** Field paths into a JSON value, as error fields and match criteria write them: `items[0].cod`. */

const FIELD_PATH = /^[^.[\]]+(\.[^.[\]]+|\[\d+\])*$/;

/** Whether a body predicate key is a field path such as `items[0].cod`. */
export const isFieldPath = (path: string): boolean => FIELD_PATH.test(path);

/** The steps of a field path: names and indexes (`items[0].cod`: items, 0, cod). */
export const fieldPathSteps = (path: string): Array<string | number> => [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map(([, name, index]) => name ?? Number(index));

/** The value at a field path (`items[0].cod`) of a JSON value, or undefined. */
export function valueAt(value: unknown, path: string): unknown {
  let node = value;
  for (const step of fieldPathSteps(path)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[step];
  }
  return node;
}
