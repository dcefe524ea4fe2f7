import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import { DataFileError } from '../../src/store/embedded/file/types.js';
import { tempDir } from '../support/tmp.js';

/** Every file of a folder with its bytes. */
const contents = (dir: string) => Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));

const order = { order_no: '1', client_id: 'client-a', status: 'created', awb: null };
const client = { client_id: 'client-a', webhook: null, generated_secret: null, faults: [], fault_seq: 0, version: 1 };
const job = { kind: 'step', key: '1', client_id: 'client-a', due_at: 1_700_000_000_000, version: 1 };

/** A data file in the store's own line layout (a header, then one line per collection start and per record), as edited by hand. */
function ownLayout(version: number, collections: Array<[string, string[]]>): string {
  const parts = collections.map(([name, records]) => (records.length === 0 ? `"${name}":{}` : `"${name}":{\n${records.join(',\n')}}`));
  return `{"schema_version":${version},"journal_generation":2,\n${parts.join(',\n')}\n}\n`;
}

const base = (version: number, orders: string[], more: Array<[string, string[]]> = []) =>
  ownLayout(version, [['meta', []], ['orders', orders], ['deliveries', []], ['clients', []], ['counters', ['"order":1']], ['jobs', []], ...more]);

describe('starting on a data file edited by hand into something else than records', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const open = () => EmbeddedStorage.open({ path: path(), requestLogSize: 10 });

  it.each([
    ['an order that is null in a schema-3 file (migrated at start)', base(3, ['"1":null']), /has null where a record must be an object in the collection "orders", key "1"/],
    ['an order that is null in a schema-4 file', base(4, [`"2":${JSON.stringify({ ...order, order_no: '2' })}`, '"1":null']), /has null where a record must be an object in the collection "orders", key "1"/],
    ['a delivery that is a number', base(4, []).replace('"deliveries":{}', '"deliveries":{\n"d1":5}'), /has 5 where a record must be an object in the collection "deliveries", key "d1"/],
    ['a collection that is a number', `{"schema_version":4,"journal_generation":2,"meta":{},"orders":5}\n`, /has 5 for the collection "orders", where an object of records must be/],
    ['a collection that is a list', `{"schema_version":4,"journal_generation":2,"meta":{},"jobs":[]}\n`, /has a list for the collection "jobs"/],
    ['a collection given twice, in the line layout', base(4, [`"1":${JSON.stringify(order)}`], [['orders', []]]), /has "orders" twice/],
    ['a collection given twice, pretty-printed', `{\n  "schema_version": 4,\n  "orders": {"1": ${JSON.stringify(order)}},\n  "orders": {}\n}\n`, /has "orders" twice/],
    ['a counter too large for a number (1e400)', base(4, []).replace('"order":1', '"order":1e400'), /has a number out of range where a counter must be a whole number .* "counters", key "order"/],
    ['a counter that is not whole', `{"schema_version":4,"journal_generation":2,"counters":{"batch":1.5}}\n`, /has 1.5 where a counter must be a whole number/],
    // Each of these started, and then answered 500 to every request showing a time (the clock's view, the journal), or stopped the start with a bare TypeError.
    ['a manual clock too large for a date (1e400)', base(4, []).replace('"meta":{}', '"meta":{\n"manual_clock_ms":1e400}'), /has a number out of range for the manual clock, where a time in epoch ms .* "meta", key "manual_clock_ms"/],
    ['a real clock whose speed is 0', base(4, []).replace('"meta":{}', '"meta":{\n"real_clock":{"sim_base_ms":1,"wall_base_ms":1,"speed":0,"previous_speed":1}}'), /has 0 for the real clock's speed, where a positive number must be in the collection "meta", key "real_clock"/],
    ['a real clock that is text', base(4, []).replace('"meta":{}', '"meta":{\n"real_clock":"now"}'), /has "now" where the real clock must be an object/],
    ['a seed that is a number', base(4, []).replace('"meta":{}', '"meta":{\n"seed":5}'), /has 5 where a text must be in the collection "meta", key "seed"/],
    [
      "a client's clock that is text",
      base(4, []).replace('"clients":{}', `"clients":{\n"client-a":${JSON.stringify({ client_id: 'client-a', webhook: null, generated_secret: null, faults: [], fault_seq: 0, clock: { offset_ms: 0, now_ms: 'soon' }, version: 1 })}}`),
      /has "soon" for the clock's now_ms, where a time in epoch ms must be in the collection "clients", key "client-a"/,
    ],
    // Each of these started, and then answered 500 on the record's reads, failed every request of its client, or played work at the wrong time.
    ['an order whose history is text', base(4, [`"1":${JSON.stringify({ ...order, history: 'x' })}`]), /has "x" for the field "history", where a list must be in the collection "orders", key "1"/],
    ['an order whose history holds text', base(4, [`"1":${JSON.stringify({ ...order, history: ['x'] })}`]), /has "x" for the field "history\[0\]", where an object must be in the collection "orders", key "1"/],
    ['an order whose creation time is text, in a schema-3 file (migrated at start)', base(3, [`"1":${JSON.stringify({ ...order, created_at: 'today' })}`]), /has "today" for the field "created_at", where a time in epoch ms must be in the collection "orders", key "1"/],
    ["a client's fault rules that are a number", base(4, []).replace('"clients":{}', `"clients":{\n"client-a":${JSON.stringify({ ...client, faults: 5 })}}`), /has 5 for the field "faults", where a list must be in the collection "clients", key "client-a"/],
    ["a client's fault rule whose match is text", base(4, []).replace('"clients":{}', `"clients":{\n"client-a":${JSON.stringify({ ...client, faults: [{ id: 'fault_1', match: 'GET', action: { type: 'status', status: 500 } }] })}}`), /has "GET" for the field "faults\[0\]\.match", where an object must be in the collection "clients", key "client-a"/],
    ["a job whose due time is text", base(4, []).replace('"jobs":{}', `"jobs":{\n"step:1":${JSON.stringify({ ...job, due_at: 'soon' })}}`), /has "soon" for the field "due_at", where a time in epoch ms must be in the collection "jobs", key "step:1"/],
    ["a job whose due time is text, in a schema-2 file (migrated at start)", base(2, []).replace('"jobs":{}', `"jobs":{\n"step:1":${JSON.stringify({ ...job, due_at: 'soon' })}}`), /has "soon" for the field "due_at", where a time in epoch ms must be in the collection "jobs", key "step:1"/],
    ["a delivery whose attempts are an object", base(4, []).replace('"deliveries":{}', `"deliveries":{\n"d1":${JSON.stringify({ id: 'd1', seq: 1, client_id: 'client-a', order_no: null, status: 'pending', attempts: {} })}}`), /has an object for the field "attempts", where a list must be in the collection "deliveries", key "d1"/],
  ])('refuses %s, naming the file and what is wrong, and leaves every file as it was and no lock', async (_case, text, message) => {
    writeFileSync(path(), text);
    writeFileSync(`${path()}.wal.2`, `${JSON.stringify([{ c: 'meta', k: 'seed', v: 's' }])}\n`);
    const before = contents(dir());
    const error = await open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(path());
    expect(contents(dir())).toEqual(before);
  });

  it.each([['[]'], ['null'], ['5'], ['"sandbox"'], ['[{"schema_version": 4}]']])('refuses a file of valid JSON that is not an object (%s) as such, not as JSON that is broken', async (text) => {
    writeFileSync(path(), `${text}\n`);
    const error = await open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileError);
    expect((error as Error).message).toBe(`The data file ${path()} does not hold a JSON object (the sandbox writes one: {"schema_version": …}). It was left untouched: repair or move it, or start with --data :memory:.`);
    expect(readFileSync(path(), 'utf8')).toBe(`${text}\n`);
  });

  it.each([
    ['schema-3', 3],
    ['schema-4', 4],
  ])('refuses a %s file whose order is an object the indexes cannot take, before writing anything, naming the file', async (_case, version) => {
    writeFileSync(path(), base(version, ['"1":{}']));
    writeFileSync(`${path()}.wal.2`, `${JSON.stringify([{ c: 'meta', k: 'seed', v: 's' }])}\n`);
    const before = contents(dir());
    await expect(open()).rejects.toThrow(new RegExp(`Cannot load the records of the data file ${path()} \\(.*\\): one was probably edited by hand`));
    expect(contents(dir())).toEqual(before);
  });

  it('refuses a schema-0 file (lowdb, migrated at start) whose order has a history of text, leaving it as it was', async () => {
    const v0 = JSON.parse(readFileSync('test/fixtures/sandbox-v0.json', 'utf8')) as { orders: Array<Record<string, unknown>> };
    v0.orders[1]!.history = 'x';
    writeFileSync(path(), JSON.stringify(v0, null, 2));
    const before = contents(dir());
    await expect(open()).rejects.toThrow(new RegExp(`The data file ${path()} has "x" for the field "history", where a list must be in the collection "orders", key "${v0.orders[1]!.order_no as string}"`));
    expect(contents(dir())).toEqual(before);
  });

  it('still starts on a file whose records and counters are well-formed, and whose seed is empty (builds that took --seed \'\' kept one)', async () => {
    writeFileSync(path(), base(4, []).replace('"order":1', `"order":1,\n"batch":${Number.MAX_SAFE_INTEGER - 1}`).replace('"meta":{}', '"meta":{\n"seed":"",\n"manual_clock_ms":253402300800000}'));
    const storage = await open();
    expect(await storage.counters.next('order')).toBe(2);
    expect(await storage.counters.next('batch')).toBe(Number.MAX_SAFE_INTEGER);
    await storage.close();
  });
});

describe('starting on a journal line that is JSON but not a commit', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');

  it.each([
    ['null', /null is not a list of changes/],
    ['5', /5 is not a list of changes/],
    ['[null]', /change 1 is null, not a change/],
    ['[{"c":"orders","k":"1","d":1},7]', /change 2 is 7, not a change/],
    ['[{"c":"orders"}]', /change 1 names no collection and key/],
    ['[{"c":"orders","k":"1"}]', /change 1 has no record for "orders" key "1"/],
    ['[{"c":"orders","k":"1","v":null}]', /change 1 puts null where a record must be an object in "orders", key "1"/],
    ['[{"c":"counters","k":"order","v":1e400}]', /change 1 puts a number out of range where a counter must be a whole number .* in "counters", key "order"/],
    ['[{"c":"meta","k":"manual_clock_ms","v":1e400}]', /change 1 puts a number out of range for the manual clock, .* in "meta", key "manual_clock_ms"/],
    ['[{"c":"orders","k":"1","p":[]}]', /change 1 sets a list as the fields of "orders" key "1"/],
    ['[{"c":"orders","k":"1","v":{"order_no":"1","history":"x"}}]', /change 1 puts "x" for the field "history", where a list must be in "orders", key "1"/],
    ['[{"c":"orders","k":"1","p":{"history":"x"}}]', /change 1 sets "x" for the field "history", where a list must be in "orders", key "1"/],
    ['[{"c":"clients","k":"client-a","v":{"client_id":"client-a","faults":5}}]', /change 1 puts 5 for the field "faults", where a list must be in "clients", key "client-a"/],
    ['[{"c":"clients","k":"client-a","p":{"faults":5}}]', /change 1 sets 5 for the field "faults", where a list must be in "clients", key "client-a"/],
    ['[{"c":"clients","k":"client-a","p":{"clock":{"offset_ms":0,"now_ms":"soon"}}}]', /change 1 sets "soon" for the clock's now_ms, where a time in epoch ms must be in "clients", key "client-a"/],
    ['[{"c":"jobs","k":"step:1","v":{"kind":"step","key":"1","client_id":"client-a","due_at":"soon"}}]', /change 1 puts "soon" for the field "due_at", where a time in epoch ms must be in "jobs", key "step:1"/],
    ['[{"c":"jobs","k":"step:1","p":{"due_at":"soon"}}]', /change 1 sets "soon" for the field "due_at", where a time in epoch ms must be in "jobs", key "step:1"/],
  ])('refuses the line %s as damaged, naming the segment and line, and leaves every file as it was and no lock', async (line, message) => {
    writeFileSync(path(), base(4, []));
    writeFileSync(`${path()}.wal.2`, `${JSON.stringify([{ c: 'meta', k: 'seed', v: 's' }])}\n${line}\n`);
    const before = contents(dir());
    const error = await EmbeddedStorage.open({ path: path(), requestLogSize: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileError);
    expect((error as Error).message).toContain(`The journal ${path()}.wal.2 is damaged at line 2: `);
    expect((error as Error).message).toMatch(message);
    expect(contents(dir())).toEqual(before);
  });
});
