/**
 * A copy of `value` with `changes` on top: the fields of `value` in their order, then
 * those of `changes` it did not have, as `Object.assign(Object.assign({}, value), changes)`
 * gives them, but built by an object literal made for that list of fields (`Shapes`), so
 * every field sits in the object itself.
 *
 * `{ ...value, ...changes }` would give each object made at a site that sees many shapes
 * a hidden class of its own (a map and a descriptor array per object). `Object.assign`
 * onto `{}` shares hidden classes, but puts every field past the fourth in a separate
 * property array: one more heap object per stored record (an order, its item, its
 * delivery) for V8's full collections to mark.
 *
 * `shapes` compiles the lists: the store's own (`SHAPES`, for records whose fields the
 * sandbox names) unless the caller gives a client's own, for parts a partner sent.
 *
 * @example
 * const next = copyWith(order, { version: order.version + 1 });
 */
export function copyWith<T extends object, C extends object>(value: T, changes: C, shapes: Shapes = SHAPES): Omit<T, keyof C> & C {
  const compiled = shapes.found(value, changes);
  if (compiled !== undefined) {
    const copy = compiled(value) as Record<string, unknown>;
    for (const key in changes) if (owns.call(changes, key)) setField(copy, key, (changes as Record<string, unknown>)[key]);
    return copy as Omit<T, keyof C> & C;
  }
  const keys = Object.keys(value);
  const changed = Object.keys(changes);
  for (const key of changed) if (!Object.hasOwn(value, key)) keys.push(key);
  const make = shapes.maker(keys);
  const copy = make === undefined ? assigned(value, keys) : (make(value) as Record<string, unknown>);
  for (const key of changed) setField(copy, key, (changes as Record<string, unknown>)[key]);
  return copy as Omit<T, keyof C> & C;
}

/** A copy of a record, every field in the object itself (see `copyWith`). */
export const copyOf = <T extends object>(value: T, shapes: Shapes = SHAPES): T => copyWith(value, {}, shapes) as unknown as T;

/** A field set as data, "__proto__" too (assigned, it would set the prototype). */
function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** A copy of `value`'s fields `keys`, field by field: what a list `Shapes` does not compile gets. */
function assigned(value: object, keys: readonly string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of keys) setField(copy, key, (value as Record<string, unknown>)[key]);
  return copy;
}

/**
 * Functions that copy a record of one list of fields through an object literal of those
 * fields, compiled once per list, so a copy holds its fields in the object itself (V8
 * gives a literal's objects room for every field it names) and shares one hidden class
 * with every copy of that list.
 *
 * Bounded: up to `capacity` lists, each of up to 64 fields, each field a plain identifier
 * of up to 64 characters (so a literal names it as it is, and the compiled source stays
 * small); any other list is copied field by field (its fields past the fourth then in a
 * property array). Lists are found by comparing them,
 * which are short and whose names V8 keeps once each. The store's own record lists are
 * a few; a partner's parts (its items and senders, whose fields and their order are the
 * partner's) each get a `Shapes` of that client, so no partner's lists take another's
 * room.
 */
export class Shapes {
  static readonly MAX_FIELDS = 64;
  static readonly NAME = /^[A-Za-z_$][\w$]{0,63}$/;
  private readonly byCount = new Map<number, Array<{ keys: readonly string[]; make: (value: object) => object }>>();
  private size = 0;
  /** False once compiling failed (node run with --disallow-code-generation-from-strings): every copy is then field by field. */
  private compiles = true;

  constructor(private readonly capacity: number) {}

  /**
   * The copy compiled for the list `copyWith(value, changes)` copies (the own enumerable
   * fields of `value`, then those of `changes` it lacks), when one is: found by walking
   * the fields in place rather than listing them, so a copy of a known list builds no
   * array of its names. Undefined when none is compiled yet (`maker` then compiles it).
   */
  found(value: object, changes: object): ((value: object) => object) | undefined {
    // Nothing to find where nothing is compiled (or can be): the fallback lists the fields anyway.
    if (this.size === 0) return undefined;
    let count = 0;
    for (const key in value) if (owns.call(value, key) && ++count > Shapes.MAX_FIELDS) return undefined;
    for (const key in changes) if (owns.call(changes, key) && !owns.call(value, key)) count += 1;
    const shapes = this.byCount.get(count);
    if (shapes !== undefined) for (const shape of shapes) if (listed(shape.keys, value, changes)) return shape.make;
    return undefined;
  }

  /** The compiled copy for this list of fields, or undefined when it is not (or will not be) compiled. */
  maker(keys: readonly string[]): ((value: object) => object) | undefined {
    if (keys.length > Shapes.MAX_FIELDS || !this.compiles) return undefined;
    const shapes = this.byCount.get(keys.length);
    if (shapes !== undefined) for (const shape of shapes) if (sameList(shape.keys, keys)) return shape.make;
    // "__proto__" is a name too, but a literal takes it as the prototype.
    if (this.size >= this.capacity || !keys.every((key) => Shapes.NAME.test(key) && key !== '__proto__')) return undefined;
    let make: (value: object) => object;
    try {
      make = new Function('value', `return { ${keys.map((key) => `${key}: value.${key}`).join(', ')} };`) as (value: object) => object;
    } catch (error) {
      if (!(error instanceof EvalError)) throw error;
      this.compiles = false;
      return undefined;
    }
    if (shapes === undefined) this.byCount.set(keys.length, [{ keys: keys.slice(), make }]);
    else shapes.push({ keys: keys.slice(), make });
    this.size += 1;
    return make;
  }
}

/** The store's own lists of fields: orders (with and without chaos modes), jobs (claimed or not), deliveries, clients, as they change. */
const SHAPES = new Shapes(64);

/**
 * Whether an object has a field of its own. On a key of a `for...in` loop over that object,
 * V8's optimizing compiler turns this form into a check of the object's hidden class;
 * `Object.hasOwn` stays a call per field, which would make a copy's look-up slower than
 * listing the fields.
 */
const owns = Object.prototype.hasOwnProperty;

/** Whether `keys` is the list `copyWith(value, changes)` copies; its length is that list's (counted by `found`). */
const listed = (keys: readonly string[], value: object, changes: object): boolean => {
  let i = 0;
  for (const key in value) {
    if (!owns.call(value, key)) continue;
    if (keys[i] !== key) return false;
    i += 1;
  }
  for (const key in changes) {
    if (!owns.call(changes, key) || owns.call(value, key)) continue;
    if (keys[i] !== key) return false;
    i += 1;
  }
  return true;
};

const sameList = (a: readonly string[], b: readonly string[]): boolean => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};
