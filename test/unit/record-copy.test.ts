import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyOf, copyWith } from '../../src/store/embedded/records.js';
import { freeze } from '../../src/store/freeze.js';

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

  it('copies records of other lists of fields, each as it is', () => {
    const job = { kind: 'awb', key: '500000000001', client_id: 'client_a', due_at: 1795575006011 };
    const odd = { 'a field with "quotes"': 1, 'line\u2028separator': 2, '7': 'an index', 'emoji 🚚': { nested: true } };
    for (const value of [job, odd, {}]) expect(JSON.stringify(copyWith(value, { version: 3 }))).toBe(JSON.stringify(assigned(value, { version: 3 })));
  });

  it('keeps a "__proto__" field of the data as Object.assign does, without compiling it into a literal', () => {
    const parsed = JSON.parse('{"order_code":"INV-1","__proto__":{"polluted":true}}') as object;
    const copy = copyOf(parsed);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(assigned(parsed, {})));
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('copies many lists of fields (more than it compiles) and long ones, all alike', () => {
    for (let n = 0; n < 40; n++) {
      const value = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`field_${n}_${i}`, i]));
      expect(copyWith(value, { version: n })).toEqual({ ...value, version: n });
    }
    const wide = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, i]));
    expect(JSON.stringify(copyOf(wide))).toBe(JSON.stringify(wide));
  });

  it('holds every field in the object itself, where Object.assign spills past the fourth into a property array', () => {
    // V8's own description of the objects (node --allow-natives-syntax, %DebugPrint).
    const dir = mkdtempSync(join(tmpdir(), 'record-copy-'));
    try {
      const script = join(dir, 'print.mts');
      const records = resolve('src/store/embedded/records.ts');
      writeFileSync(
        script,
        [
          `import { copyWith } from ${JSON.stringify(records)};`,
          `const order = JSON.parse(${JSON.stringify(JSON.stringify(order()))});`,
          `const print = new Function('o', '%DebugPrint(o)');`,
          'print(copyWith(order, { version: 2 }));',
          'print(Object.assign(Object.assign({}, order), { version: 2 }));',
        ].join('\n'),
      );
      // Into a file: V8 prints with C's stdio, which loses output on a pipe node made non-blocking.
      const printed = join(dir, 'printed.txt');
      const fd = openSync(printed, 'w');
      try {
        execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', script], { stdio: ['ignore', fd, 'inherit'] });
      } finally {
        closeSync(fd);
      }
      const output = readFileSync(printed, 'utf8');
      const properties = [...output.matchAll(/^ - properties: \S+ <(\w+)\[(\d+)\]>/gm)].map((m) => `${m[1]}[${m[2]}]`);
      expect(properties).toHaveLength(2);
      expect(properties[0]).toBe('FixedArray[0]');
      expect(properties[1]).toMatch(/^PropertyArray/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
