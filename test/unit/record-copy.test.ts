import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { copyOf, copyWith, Shapes } from '../../src/store/embedded/file/record-copy.js';
import { freeze } from '../../src/store/freeze.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** An order as the store keeps one, fields in the order the create writes them. */
const order = () =>
  freeze({
    order_no: '500000000001',
    batch_id: '700000000001',
    client_id: 'client_a',
    courier_code: 'jne',
    scenario: 'delivered',
    status: 'created',
    sender: { sender_name: 'Toko Sinar Jaya', sender_phone: '081234567890' },
    item: { order_code: 'INV-1', receiver_name: 'Budi Santoso', item_weight: '1.5' },
    awb: null,
    awb_due_at: 1795575006011,
    awb_generated_at: null,
    history: [],
    created_at: 1795575005011,
    updated_at: 1795575005011,
    cancelled_at: null,
    version: 1,
  });

/** What every copy was before: fields assigned onto `{}`. */
const assigned = (value: object, changes: object) => Object.assign(Object.assign({}, value), changes);

describe('copies of stored records (copyWith)', () => {
  it('has the fields of the record, then the new ones of the changes, as Object.assign gives them', () => {
    const before = order();
    const changes = { status: 'awb_generated', awb: 'JN1100767963', version: 2, claimed_by: 'replica-1' };
    const copy = copyWith(before, changes);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(assigned(before, changes)));
    expect(Object.keys(copy).slice(-2)).toEqual(['version', 'claimed_by']);
    expect(copy.status).toBe('awb_generated');
    // The parts are the record's own (the store shares them); the record itself is untouched.
    expect(copy.sender).toBe(before.sender);
    expect(before.status).toBe('created');
  });

  it('gives a plain object that can be changed, from a frozen record', () => {
    const copy = copyOf(order());
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.isFrozen(copy)).toBe(false);
    (copy as { status: string }).status = 'cancelled';
    expect(copy.status).toBe('cancelled');
  });

  it('copies records with fields no literal names as they are (quotes, separators, indexes, emoji), field by field', () => {
    const odd = { 'a field with "quotes"': 1, 'back\\slash': 2, 'line\u2028separator': 3, '7': 'an index', '': 'empty', 'emoji 🚚': { nested: true } };
    expect(JSON.stringify(copyWith(odd, { version: 3 }))).toBe(JSON.stringify(assigned(odd, { version: 3 })));
  });

  it('keeps a "__proto__" field of the data as a field, where Object.assign would make it the prototype', () => {
    const parsed = JSON.parse('{"order_code":"INV-1","__proto__":{"polluted":true},"item_qty":"1"}') as object;
    const copy = copyWith(parsed, { version: 1 });
    expect(JSON.stringify(copy)).toBe('{"order_code":"INV-1","__proto__":{"polluted":true},"item_qty":"1","version":1}');
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(assigned(parsed, {}))).toEqual({ polluted: true });
  });

  it('copies a record again through the list compiled for it: the same fields, whatever the changes have or lack', () => {
    const shapes = new Shapes(8);
    const first = order();
    for (const changes of [{ version: 2 }, { status: 'awb_generated', claimed_by: 'replica-1' }, {}, { claimed_by: 'replica-1', status: 'x' }]) {
      const once = copyWith(first, changes, shapes);
      const again = copyWith(freeze({ ...first, order_no: '500000000002' }), changes, shapes);
      expect(JSON.stringify(once)).toBe(JSON.stringify(assigned(first, changes)));
      expect(JSON.stringify(again)).toBe(JSON.stringify(assigned({ ...first, order_no: '500000000002' }, changes)));
    }
    // A field the prototype lends is not the record's: not copied, as Object.keys does not list it.
    const lent = Object.assign(Object.create({ inherited: 1 }) as object, { order_no: '1', status: 'created' });
    copyWith({ order_no: '1', status: 'created', inherited: 2 }, {}, shapes);
    expect(JSON.stringify(copyWith(lent, { version: 1 }, shapes))).toBe('{"order_no":"1","status":"created","version":1}');
  });

  it('copies many lists of fields and long ones, each in its own order', () => {
    for (let n = 0; n < 80; n++) {
      const value = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`field_${n}_${2 - i}`, i]));
      expect(JSON.stringify(copyWith(value, { version: n }))).toBe(JSON.stringify(assigned(value, { version: n })));
    }
    const wide = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${99 - i}`, i]));
    expect(JSON.stringify(copyOf(wide))).toBe(JSON.stringify(wide));
  });
});

describe('the lists of fields compiled into copies (Shapes)', () => {
  it('compiles a list once and finds it again', () => {
    const shapes = new Shapes(4);
    const make = shapes.maker(['order_no', 'status']);
    expect(make).toBeTypeOf('function');
    expect(shapes.maker(['order_no', 'status'])).toBe(make);
    expect(JSON.stringify(make!({ order_no: '1', status: 'created' }))).toBe('{"order_no":"1","status":"created"}');
  });

  it('compiles up to its capacity, then copies field by field; lists found before are still found', () => {
    const shapes = new Shapes(2);
    const first = shapes.maker(['a']);
    expect(shapes.maker(['b'])).toBeTypeOf('function');
    expect(shapes.maker(['c'])).toBeUndefined();
    expect(shapes.maker(['a'])).toBe(first);
  });

  it('compiles only plain names of up to 64 characters, never "__proto__", and up to 64 fields', () => {
    const shapes = new Shapes(100);
    expect(shapes.maker(['sender_name', '$ref', '_x1'])).toBeTypeOf('function');
    for (const name of ['two words', 'quote"', '7', '', 'x'.repeat(65), '__proto__', 'emoji🚚', 'a-b']) expect(shapes.maker(['order_code', name]), name).toBeUndefined();
    expect(shapes.maker(Array.from({ length: 65 }, (_, i) => `f${i}`))).toBeUndefined();
    expect(shapes.maker(Array.from({ length: 64 }, (_, i) => `f${i}`))).toBeTypeOf('function');
  });

  it('finds a compiled list from the record and its changes, up to 64 fields, and nothing before any is compiled', () => {
    const shapes = new Shapes(4);
    const wide = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`f${i}`, i]));
    expect(shapes.found(wide, {})).toBeUndefined();
    const make = shapes.maker(Object.keys(wide));
    expect(shapes.found(wide, {})).toBe(make);
    expect(shapes.found(wide, { f3: 'changed' })).toBe(make);
    expect(shapes.found(wide, { f64: 'new' })).toBeUndefined();
    expect(shapes.found({ ...wide, f64: 64 }, {})).toBeUndefined();
    expect(shapes.found(Object.fromEntries(Object.entries(wide).reverse()), {})).toBeUndefined();
  });

  it('holds every field in the object itself, also for a client whose neighbour sent many kinds of item', () => {
    // V8's own description of the objects (node --allow-natives-syntax, %DebugPrint).
    const dir = mkdtempSync(join(tmpdir(), 'record-copy-'));
    try {
      const script = join(dir, 'print.mts');
      const records = pathToFileURL(join(ROOT, 'src/store/embedded/order-packer.ts')).href;
      const copier = pathToFileURL(join(ROOT, 'src/store/embedded/file/record-copy.ts')).href;
      const freezer = pathToFileURL(join(ROOT, 'src/store/freeze.ts')).href;
      writeFileSync(
        script,
        [
          `import { OrderPacker } from ${JSON.stringify(records)};`,
          `import { copyWith } from ${JSON.stringify(copier)};`,
          `import { freeze } from ${JSON.stringify(freezer)};`,
          `const order = JSON.parse(${JSON.stringify(JSON.stringify(order()))});`,
          `const print = new Function('o', '%DebugPrint(o)');`,
          'print(copyWith(order, { version: 2 }));',
          'print(Object.assign(Object.assign({}, order), { version: 2 }));',
          // Client A packs 40 kinds of item (each committed, so frozen, and differing from the last): its own lists fill up.
          'const packer = new OrderPacker();',
          'const item = (i, kind) => ({ order_code: `INV-${i}`, receiver_name: "Budi Santoso Wijaya", receiver_phone: "081398765432", receiver_address: "Jl. Setiabudi No. 45, Bandung", item_name: "Kemeja batik", item_weight: "1.5", [`extra_${kind}`]: "a field of its own" });',
          'for (let i = 0; i < 40; i++) packer.pack(freeze({ ...order, client_id: "client_a", item: item(i, i) }));',
          'packer.pack(freeze({ ...order, client_id: "client_b", item: item(1, "b") }));',
          'print(packer.pack(freeze({ ...order, client_id: "client_b", item: item(2, "b") })).item);',
          'print(packer.pack(freeze({ ...order, client_id: "client_a", item: item(41, 41) })).item);',
        ].join('\n'),
      );
      // Into a file: V8 prints with C's stdio, which loses output on a pipe node made non-blocking.
      const printed = join(dir, 'printed.txt');
      const fd = openSync(printed, 'w');
      try {
        execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', fd, 'inherit'], timeout: 60_000 });
      } finally {
        closeSync(fd);
      }
      const output = readFileSync(printed, 'utf8');
      const properties = [...output.matchAll(/^ - properties: \S+ <(\w+)\[(\d+)\]>/gm)].map((m) => `${m[1]}[${m[2]}]`);
      expect(properties).toHaveLength(4);
      // An order copied: every field in the object; assigned onto {}, the fields past the fourth in a property array.
      expect(properties[0]).toBe('FixedArray[0]');
      expect(properties[1]).toMatch(/^PropertyArray/);
      // Client B's item, copied to share its strings with B's previous one: in the object, though A filled its own lists.
      expect(properties[2]).toBe('FixedArray[0]');
      // Client A's 41st kind of item: past A's lists, copied field by field as before.
      expect(properties[3]).toMatch(/^PropertyArray/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
