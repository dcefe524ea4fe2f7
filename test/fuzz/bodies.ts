import fc from 'fast-check';
import { deepNesting, nastyValue } from './values.js';

type Json = unknown;
type Path = Array<string | number>;

/** Every place in a JSON value (objects' keys, arrays' indexes), the root excluded. */
function placesOf(value: Json, at: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(value)) value.forEach((v, i) => (out.push([...at, i]), placesOf(v, [...at, i], out)));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push([...at, k]), placesOf(v, [...at, k], out);
  return out;
}

type Mutation = { kind: 'set'; path: Path; value: Json } | { kind: 'delete'; path: Path } | { kind: 'add'; path: Path; key: string; value: Json };

function apply(body: Json, m: Mutation): Json {
  const copy = structuredClone(body);
  const parentPath = m.kind === 'add' ? m.path : m.path.slice(0, -1);
  let parent: Json = copy;
  for (const key of parentPath) parent = (parent as Record<string | number, Json>)?.[key];
  if (!parent || typeof parent !== 'object') return copy;
  const target = parent as Record<string | number, Json>;
  if (m.kind === 'set') target[m.path.at(-1)!] = m.value;
  else if (m.kind === 'delete') {
    if (Array.isArray(target)) target.splice(Number(m.path.at(-1)), 1);
    else delete target[m.path.at(-1)!];
  } else if (!Array.isArray(target)) Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function mutation(body: Json): fc.Arbitrary<Mutation> {
  const places = placesOf(body);
  const containers: Path[] = [[], ...places.filter((p) => {
    let v: Json = body;
    for (const k of p) v = (v as Record<string | number, Json>)[k];
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  })];
  const extraKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'unknown_field', ''), fc.string({ maxLength: 12 }));
  const choices: Array<fc.Arbitrary<Mutation>> = [
    fc.record({ kind: fc.constant('add' as const), path: fc.constantFrom(...containers), key: extraKey, value: nastyValue }),
  ];
  if (places.length > 0) {
    choices.push(fc.record({ kind: fc.constant('set' as const), path: fc.constantFrom(...places), value: nastyValue }));
    choices.push(fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom(...places) }));
  }
  return fc.oneof(...choices);
}

/**
 * A request body as JSON text, from a valid example: the example itself, the
 * example with one to four fields given wrong types, huge or unicode values,
 * removed or added (prototype keys included), deep nesting in a field, a huge
 * `items`, random JSON, malformed JSON, or nothing at all.
 */
export function bodyText(examples: Json[]): fc.Arbitrary<string | undefined> {
  const seeds = examples.length > 0 ? examples : [{}];
  const mutated = fc.constantFrom(...seeds).chain((example) =>
    fc.array(mutation(example), { minLength: 1, maxLength: 4 }).map((ms) => JSON.stringify(ms.reduce(apply, example))),
  );
  const nested = fc.tuple(fc.constantFrom(...seeds), deepNesting).map(([example, deep]) => {
    const text = JSON.stringify(example && typeof example === 'object' && !Array.isArray(example) ? { ...example, nested: '\u0001DEEP' } : { nested: '\u0001DEEP' });
    return text.replace('"\\u0001DEEP"', deep);
  });
  const manyItems = fc.tuple(fc.constantFrom(...seeds), fc.integer({ min: 101, max: 3_000 })).map(([example, n]) => {
    const item = (example as { items?: Json[] })?.items?.[0] ?? {};
    return JSON.stringify({ ...(example as object), items: Array.from({ length: n }, () => item) });
  });
  const malformed = fc.tuple(fc.constantFrom(...seeds), fc.nat()).map(([example, cut]) => {
    const text = JSON.stringify(example);
    return text.slice(0, cut % Math.max(1, text.length));
  });
  return fc.oneof(
    { arbitrary: fc.constantFrom(...seeds).map((e) => JSON.stringify(e)), weight: 3 },
    { arbitrary: mutated, weight: 10 },
    { arbitrary: nested, weight: 1 },
    { arbitrary: manyItems, weight: 1 },
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), weight: 2 },
    { arbitrary: malformed, weight: 1 },
    { arbitrary: fc.constantFrom(undefined, '', 'null', '[]', '""', '0', '{', '{"a":1,}', "{'a':1}", '\u0000', '\uFEFF{}'), weight: 2 },
  );
}
