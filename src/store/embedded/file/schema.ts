import { DataFileError, type JournaledFileData } from './types.js';

/** The schema version this build writes. */
export const SCHEMA_VERSION = 4;

/** Collections every data file has. */
export const COLLECTIONS = ['meta', 'orders', 'deliveries', 'clients', 'counters', 'jobs'] as const;

type Migration = (data: JournaledFileData) => JournaledFileData;

/**
 * Version 0: the data files of sandbox 0.0.x, plain lowdb JSON with no `schema_version`
 * and no `journal_generation`: `orders` and `deliveries` were arrays, the generated
 * token stood at the top level as `default_token`, and orders had no `awb_error` or
 * `cancelled_at` yet. See test/fixtures/sandbox-v0.json.
 */
function fromVersion0(data: JournaledFileData): JournaledFileData {
  const old = data as unknown as Record<string, unknown>;
  const keyed = (records: unknown, key: string): Record<string, unknown> => {
    if (!Array.isArray(records)) return (records as Record<string, unknown> | undefined) ?? {};
    return Object.fromEntries(records.map((r: Record<string, unknown>) => [String(r[key]), r]));
  };
  const orders = keyed(old.orders, 'order_no');
  for (const order of Object.values(orders) as Array<Record<string, unknown>>) {
    order.awb_error ??= null;
    order.cancelled_at ??= null;
  }
  const meta = { ...((old.meta as Record<string, unknown> | undefined) ?? {}) };
  if (typeof old.default_token === 'string') meta.default_token ??= old.default_token;
  const { default_token: _token, ...rest } = old;
  return { ...rest, schema_version: 1, journal_generation: 0, meta, orders, deliveries: keyed(old.deliveries, 'id') } as JournaledFileData;
}

/**
 * Version 1 kept the id counters in `meta.counters` and `meta.webhook_counter`, and
 * each client's webhook setting and generated secret in `webhook_endpoints` and
 * `webhook_secrets`. Version 2 has a `counters` collection (one record per counter),
 * one `clients` record per client, and a `jobs` collection. The due times of orders
 * and deliveries become jobs at the first start (see `migrateDueTimes`), where the
 * scenarios are known.
 */
function fromVersion1(data: JournaledFileData): JournaledFileData {
  const meta = { ...((data.meta as Record<string, unknown> | undefined) ?? {}) };
  const counters: Record<string, number> = {};
  const old = meta.counters as { order?: number; batch?: number; awb?: Record<string, number> } | undefined;
  if (old?.order) counters.order = old.order;
  if (old?.batch) counters.batch = old.batch;
  for (const [code, n] of Object.entries(old?.awb ?? {})) counters[`awb:${code}`] = n;
  if (typeof meta.webhook_counter === 'number') counters.delivery = meta.webhook_counter;
  delete meta.counters;
  delete meta.webhook_counter;
  const endpoints = (data.webhook_endpoints as Record<string, Record<string, unknown>> | undefined) ?? {};
  const secrets = (data.webhook_secrets as Record<string, string> | undefined) ?? {};
  const clients: Record<string, unknown> = {};
  for (const id of new Set([...Object.keys(endpoints), ...Object.keys(secrets)])) {
    const { client_id: _id, ...webhook } = endpoints[id] ?? {};
    clients[id] = { client_id: id, webhook: endpoints[id] ? webhook : null, generated_secret: secrets[id] ?? null, faults: [], fault_seq: 0, version: 1 };
  }
  const { webhook_endpoints: _e, webhook_secrets: _s, ...rest } = data;
  return { ...rest, schema_version: 2, meta, counters, clients, jobs: {} } as JournaledFileData;
}

/**
 * Version 3 keeps the records of version 2 as they were; its journal may carry a changed
 * record as the fields that changed (`{"c", "k", "p": {...}}`, see `patchOf` in
 * store.ts), which a sandbox of version 2 would misread. The new number makes that
 * sandbox refuse the file rather than lose those changes; this one rewrites a version-2
 * file at its first start, as after any migration.
 */
const fromVersion2: Migration = (data) => ({ ...data, schema_version: 3 });

/**
 * Version 4 keeps the records of version 3, but a data file may write an order shorter
 * than its JSON (its played steps as numbers, its sender or item as the number of an
 * earlier order it shares them with: see `OrderFileFormat`), which a sandbox of version 3
 * would take as they stand. The journal is as in version 3.
 */
const fromVersion3: Migration = (data) => ({ ...data, schema_version: 4 });

/** `MIGRATIONS[n]` turns a version-n file into a version-(n+1) file. */
const MIGRATIONS: Record<number, Migration> = { 0: fromVersion0, 1: fromVersion1, 2: fromVersion2, 3: fromVersion3 };

/** An empty store of the current version. */
export function emptyData(): JournaledFileData {
  const data: JournaledFileData = { schema_version: SCHEMA_VERSION, journal_generation: 0 };
  for (const name of COLLECTIONS) data[name] = {};
  return data;
}

/** The schema version of data read from a file; refuses one written by a newer sandbox rather than guess at it. */
export function checkVersion(data: JournaledFileData, path: string): number {
  const version = data.schema_version ?? 0;
  if (version > SCHEMA_VERSION) {
    throw new DataFileError(
      `The data file ${path} has schema version ${version}, newer than this sandbox (${SCHEMA_VERSION}). ` +
        'Upgrade the sandbox or start with another --data file.',
    );
  }
  return version;
}

/**
 * Brings data read from a file up to the current schema version, one step at a time.
 * Refuses a file written by a newer sandbox rather than guess at it.
 */
export function migrate(data: JournaledFileData, path: string): JournaledFileData {
  let current: JournaledFileData = { ...data, schema_version: checkVersion(data, path) };
  while (current.schema_version < SCHEMA_VERSION) {
    const step = MIGRATIONS[current.schema_version];
    if (!step) throw new DataFileError(`No migration from schema version ${current.schema_version} (${path}).`);
    current = step(current);
  }
  for (const name of COLLECTIONS) current[name] ??= {};
  current.journal_generation ??= 0;
  return current;
}
