import { fieldPathSteps, isTooManyEntries, type FieldError, type MatchableOperation } from '../shared/index.js';

/**
 * What a probe builds at most; a rule past any of these is not checked against the spec (and
 * taken), so that a hostile rule costs little. The highest index: validation lists the
 * problems of an array's first 128 items (LISTED_ARRAY_ITEMS in spec/compile.ts). A
 * criterion at a higher index is probed at this one: an array the spec refuses as too long
 * with 128 entries is refused with more.
 */
const PROBE_MAX_INDEX = 127;
/** The deepest path: a request nested deeper than 64 levels (MAX_JSON_DEPTH in http/depth.ts) is refused before validation. */
const PROBE_MAX_DEPTH = 64;
/** The most values and containers in one probe, the empty entries before an index among them. */
const PROBE_MAX_NODES = 1_000;

/** Where the probe puts a criterion's value: its path with each index past PROBE_MAX_INDEX at it. */
export const probedPath = (path: string): string => path.replace(/\[(\d+)\]/g, (_, index: string) => `[${Math.min(Number(index), PROBE_MAX_INDEX)}]`);

/** The array fields a path goes through by index (`items[0].parts[3]`: items, items[0].parts). */
const arraysOf = (path: string): string[] => [...path.matchAll(/\[\d+\]/g)].map((m) => path.slice(0, m.index));

/** Sets an own property, so that a name such as `__proto__` is a field, not the prototype. */
const put = (node: Record<string, unknown> | unknown[], key: string | number, value: unknown): void => void Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });

/**
 * A JSON body holding each criterion's value at its field path, the entries of an array
 * before an index left as empty objects; undefined when two criteria cross (one's value is
 * where the other goes on into) or the probe would pass its bounds (PROBE_MAX_*).
 */
export function probeBody(criteria: Record<string, unknown>): Record<string, unknown> | undefined {
  const root: Record<string, unknown> = {};
  // The criteria's own values, copied: the probe never changes a rule's match, and no other criterion goes into one.
  const values = new Set<unknown>();
  let nodes = 0;
  const entries = Object.entries(criteria);
  if (entries.length > PROBE_MAX_NODES) return undefined;
  for (const [path, value] of entries) {
    const steps = fieldPathSteps(path).map((step) => (typeof step === 'number' ? Math.min(step, PROBE_MAX_INDEX) : step));
    if (steps.length > PROBE_MAX_DEPTH) return undefined;
    let node: Record<string, unknown> | unknown[] = root;
    for (const [i, step] of steps.entries()) {
      if (typeof step === 'number' && !Array.isArray(node)) return undefined;
      if (typeof step === 'string' && Array.isArray(node)) return undefined;
      const held = Object.hasOwn(node, step) ? (node as Record<string | number, unknown>)[step] : undefined;
      if (i === steps.length - 1) {
        if (held !== undefined || (nodes += 1) > PROBE_MAX_NODES) return undefined;
        const copy = structuredClone(value);
        values.add(copy);
        put(node, step, copy);
        break;
      }
      const next = steps[i + 1]!;
      if (held === undefined) {
        nodes += 1 + (Array.isArray(node) ? Math.max(0, (step as number) - node.length) : 0);
        if (nodes > PROBE_MAX_NODES) return undefined;
        if (Array.isArray(node)) for (let k = node.length; k < (step as number); k += 1) node.push({});
        put(node, step, typeof next === 'number' ? [] : {});
      } else if (values.has(held) || typeof held !== 'object' || held === null || Array.isArray(held) !== (typeof next === 'number')) return undefined;
      node = (node as Record<string | number, unknown>)[step] as Record<string, unknown> | unknown[];
    }
  }
  return root;
}

/** An operation whose body the spec validates (CompiledOperation has this). */
type Validated = MatchableOperation & { validateBody?(body: unknown): FieldError[] };

/**
 * The body criteria no request of `operations` that passes validation can meet, each with
 * the spec's word for why (a number where text is wanted, an item without the fields it must have):
 * validation runs before any rule, so such a request is a 400 first. A criterion is named
 * only when every operation that takes a body refuses it.
 */
export function refusedBodyValues(criteria: Record<string, unknown>, operations: readonly Validated[]): Array<{ path: string; problem: string; operations: string[] }> {
  const checked = operations.filter((op) => op.body !== 'none' && op.validateBody !== undefined);
  const probe = checked.length > 0 ? probeBody(criteria) : undefined;
  if (probe === undefined) return [];
  const refusals = new Map<string, { problem: string; operations: string[] }>();
  for (const [n, op] of checked.entries()) {
    const problems = op.validateBody!(probe);
    for (const path of Object.keys(criteria)) {
      const at = probedPath(path);
      const arrays = arraysOf(at);
      const within = problems.find((p) => p.field === at || p.field.startsWith(`${at}.`) || p.field.startsWith(`${at}[`) || (arrays.includes(p.field) && isTooManyEntries(p.message)));
      const refused = refusals.get(path);
      if (!within) refusals.delete(path);
      else if (n === 0) refusals.set(path, { problem: `${within.field === at ? '' : `${within.field} `}${within.message}`, operations: [op.operationId] });
      else refused?.operations.push(op.operationId);
    }
  }
  return [...refusals].map(([path, refusal]) => ({ path, ...refusal }));
}
