import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientRegistry } from '../../src/clients/registry.js';
import { ApiError } from '../../src/http/errors.js';
import { checkAdminOnly } from '../../src/http/roles.js';
import type { CompiledOperation } from '../../src/spec/compile.js';
import { deref } from '../../src/spec/load.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';

const ROLES = ['admin', 'partner', 'read_only'] as const;
type Role = (typeof ROLES)[number];

const ADMIN = 'token-admin-0123456789';
const READER_A = 'token-reader-of-client-a';
/** Every courier of the fixtures: a client's own unless its configuration limits them. */
const ALL_COURIERS = ['jne', 'jnt', 'sicepat', 'anteraja', 'posindonesia'];
const TOKENS: Record<Role, string> = { admin: ADMIN, partner: TOKEN_A, read_only: READER_A };
const SECRET_A = 'whsec_QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB';

/**
 * The operations that act on the whole sandbox rather than on one client's data
 * (issue 16: listing clients, a sandbox-wide reset; speed and metrics join them).
 * Written here, not read from the spec: the spec is what this test checks.
 */
const SANDBOX_WIDE = new Set(['listClients', 'resetSandbox', 'getMetrics', 'advanceAllClocks', 'setClockSpeed']);

/** The POSTs that only read, asking their question in a body (the manual's roles table names them). */
const READS_BY_BODY = new Set(['countRequests']);

/** What a role may do, from the method and the role alone: the table of the manual (docs/guides/shared-deployments.md, Roles). */
function forbidden(role: Role, method: string, operationId: string): boolean {
  if (role === 'admin') return false;
  if (SANDBOX_WIDE.has(operationId)) return true; // two partners and an admin here: not the laptop case
  return role === 'read_only' && !['get', 'head'].includes(method.toLowerCase()) && !READS_BY_BODY.has(operationId);
}

/** The roles the spec says an operation answers 403 to: its 403 response's "Forbidden to roles: ..." line. */
function documentedForbidden(document: Record<string, unknown>, op: CompiledOperation): Role[] {
  const responses = (op.definition.responses ?? {}) as Record<string, unknown>;
  const forbiddenResponse = responses['403'] === undefined ? undefined : (deref(document, responses['403']) as { description?: string });
  const line = /Forbidden to roles: ([a-z_, ]+)/.exec(forbiddenResponse?.description ?? '')?.[1];
  return line === undefined ? [] : (line.split(',').map((r) => r.trim()) as Role[]);
}

interface World {
  orderNo: string;
  pendingOrderNo: string;
  awb: string;
  deliveryId: string;
  faultId: string;
}

/** Client A's records, so that every operation has something real to act on. */
async function makeWorld(sandbox: TestSandbox, receiver: Receiver): Promise<World> {
  await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: receiver.url, secret: SECRET_A } });
  const [orderNo] = (await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).body.order_numbers as string[];
  await sandbox.advance(60_000);
  const [pendingOrderNo] = (await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).body.order_numbers as string[];
  const awb = (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.awb as string;
  const deliveryId = (await sandbox.call('GET', '/__sandbox/webhooks/deliveries')).body.deliveries[0].id as string;
  const fault = await sandbox.call('POST', '/__sandbox/faults', { body: { match: { headers: { 'x-never': 'sent' } }, action: { type: 'status', status: 500 }, times: 5 } });
  await sandbox.call('GET', '/v1/couriers'); // one journal entry
  // The journal records a request once its connection closes, which may come after the
  // answer reached the test (and, on PostgreSQL, in a batch): wait for the entry, so the
  // state compared below starts with it.
  for (let tries = 0; tries < 100; tries++) {
    const journal = await sandbox.services.storage.requests.list('client-a', {});
    if (journal.some((entry) => entry.path === '/v1/couriers')) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { orderNo: orderNo!, pendingOrderNo: pendingOrderNo!, awb, deliveryId, faultId: fault.body.id as string };
}

/** A request for an operation: its path with real ids of client A, and a body that fits it. */
function requestFor(op: CompiledOperation, world: World, receiver: Receiver): { path: string; body: unknown } {
  const ids: Record<string, string> = { order_no: world.orderNo, delivery_id: world.deliveryId, id: world.faultId, file: `${world.awb}.png` };
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? '1'));
  const bodies: Record<string, unknown> = {
    createOrder: createRequest(1),
    cancelOrder: { order_no: world.pendingOrderNo },
    advanceClock: { ms: 1_000 },
    setWebhook: { url: receiver.url, secret: SECRET_A },
    createFaultRule: { match: { headers: { 'x-never': 'sent' } }, action: { type: 'status', status: 500 } },
    advanceOrder: {},
  };
  return { path, body: op.body === 'none' ? undefined : (bodies[op.operationId] ?? {}) };
}

const label = (op: CompiledOperation) => `${op.operationId} (${op.method.toUpperCase()} ${op.path})`;

/** Two partners, a read_only token of partner A, and an admin. */
const SHARED_OPTIONS = {
  adminTokens: [ADMIN],
  clients: [
    { token: TOKEN_A, id: 'client-a' },
    { token: TOKEN_B, id: 'client-b' },
    { token: READER_A, id: 'client-a', role: 'read_only' as const },
  ],
};

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.close());

describe('roles: every operation of both specs × admin, partner, read_only', () => {
  let sandbox: TestSandbox;
  let world: World;
  const operations = () => [...sandbox.services.specs.provider.operations, ...sandbox.services.specs.control.operations];
  let requests = 0;

  beforeAll(async () => {
    sandbox = await testSandbox(SHARED_OPTIONS);
    world = await makeWorld(sandbox, receiver);
  });
  afterAll(() => sandbox.close());

  it('the specs document, for every operation, exactly the roles that the method and the role say get 403', () => {
    for (const op of operations()) {
      const spec = op.path.startsWith('/__sandbox') ? sandbox.services.specs.control : sandbox.services.specs.provider;
      const derived = ROLES.filter((role) => forbidden(role, op.method, op.operationId));
      expect(documentedForbidden(spec.document, op).sort(), label(op)).toEqual(derived.sort());
      if (derived.length > 0) expect(op.statuses, label(op)).toContain(403);
    }
  });

  it('marks exactly the sandbox-wide operations with x-sandbox-scope: sandbox', () => {
    const marked = operations().filter((op) => op.definition['x-sandbox-scope'] === 'sandbox').map((op) => op.operationId);
    expect(marked.sort()).toEqual([...SANDBOX_WIDE].sort());
  });

  // read_only first: it must change nothing, so admin and partner then act on the same world.
  it.each([...ROLES].reverse())('%s: answers 403 with the envelope exactly where derived, and never 401 or 5xx elsewhere', async (role) => {
    for (const op of operations()) {
      const { path, body } = requestFor(op, world, receiver);
      const headers: Record<string, string> = role === 'admin' ? { 'X-Sandbox-Client': 'client-a' } : {};
      requests++;
      const res: Response = await sandbox.call(op.method, path, { token: TOKENS[role], body, headers });
      const what = `${role} ${label(op)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      if (forbidden(role, op.method, op.operationId)) {
        expect(res.status, what).toBe(403);
        expect(res.body, what).toMatchObject({ success: false, errors: [{ field: 'header.authorization' }] });
      } else {
        expect(res.status, what).not.toBe(403);
        expect(res.status, what).not.toBe(401);
        expect(res.status, what).toBeLessThan(500);
      }
    }
  });

  it('prints its figures', () => {
    console.log(`[security:roles] ${operations().length} operations × ${ROLES.length} roles: ${requests} requests, each 403 exactly where the method and the role say`);
  });
});

describe('a read_only token changes nothing', () => {
  let sandbox: TestSandbox;
  let world: World;

  beforeAll(async () => {
    sandbox = await testSandbox(SHARED_OPTIONS);
    world = await makeWorld(sandbox, receiver);
  });
  afterAll(() => sandbox.close());

  /** Everything a request could change, read through the storage port, for every client. */
  async function state() {
    const { storage, clock } = sandbox.services;
    const perClient: Record<string, unknown> = {};
    for (const id of ['client-a', 'client-b']) {
      perClient[id] = {
        orders: (await storage.orders.list(id, { limit: 1_000 })).items,
        deliveries: (await storage.deliveries.list(id, { limit: 1_000 })).items,
        settings: await storage.settings.get(id),
        journal: await storage.requests.list(id, {}),
        jobs: await storage.jobs.count(id),
      };
    }
    return { clients: perClient, clock: clock.now(), webhooksReceived: receiver.received.length };
  }

  it('every non-GET operation of both specs answers it 403 but the reads by body, and orders, deliveries, settings, jobs, journal and clock are as before', async () => {
    const nonGets = [...sandbox.services.specs.provider.operations, ...sandbox.services.specs.control.operations].filter((op) => op.method !== 'get');
    expect(nonGets.length).toBeGreaterThan(10);
    const before = await state();
    for (const op of nonGets) {
      const { path, body } = requestFor(op, world, receiver);
      const res = await sandbox.call(op.method, path, { token: READER_A, body });
      if (READS_BY_BODY.has(op.operationId)) {
        expect(res.status, label(op)).toBe(200);
        continue;
      }
      expect(res.status, label(op)).toBe(403);
      expect(res.body.message, label(op)).toContain('read-only');
    }
    const after = await state();
    // The journal may record the reader's own provider requests (each a 403); everything else is unchanged.
    const journalOf = (s: typeof before) => s.clients['client-a'] as { journal: Array<{ id: number; status: number | null }> };
    const added = journalOf(after).journal.filter((e) => !journalOf(before).journal.some((b) => b.id === e.id));
    expect(added.filter((e) => e.status !== 403)).toEqual([]);
    journalOf(after).journal = journalOf(after).journal.filter((e) => !added.includes(e));
    expect(after).toEqual(before);
  });

  it('reads its client’s data, with the webhook secret masked', async () => {
    const orders = await sandbox.call('GET', '/__sandbox/orders', { token: READER_A });
    expect(orders.body.orders.map((o: { order_no: string }) => o.order_no)).toContain(world.orderNo);
    const webhook = await sandbox.call('GET', '/__sandbox/webhook', { token: READER_A });
    expect(webhook.status).toBe(200);
    expect(webhook.body.secret).toBe('whse…UFB');
    expect(JSON.stringify(webhook.body)).not.toContain(SECRET_A.slice(6));
    // The partner's own token still sees the secret it verifies signatures with.
    expect((await sandbox.call('GET', '/__sandbox/webhook', { token: TOKEN_A })).body.secret).toBe(SECRET_A);
  });
});

describe('an admin acts for the client named by X-Sandbox-Client', () => {
  let sandbox: TestSandbox;
  let orderOfB: string;

  beforeAll(async () => {
    sandbox = await testSandbox(SHARED_OPTIONS);
    orderOfB = (await sandbox.call('POST', '/v1/order', { token: TOKEN_B, body: createRequest(1) })).body.order_numbers[0] as string;
  });
  afterAll(() => sandbox.close());

  const asAdmin = (method: string, path: string, client?: string, body?: unknown) =>
    sandbox.call(method, path, { token: ADMIN, body, headers: client === undefined ? {} : { 'X-Sandbox-Client': client } });

  it('sees and changes that client’s data only', async () => {
    expect((await asAdmin('GET', `/v1/order/${orderOfB}`, 'client-b')).status).toBe(200);
    expect((await asAdmin('GET', `/v1/order/${orderOfB}`, 'client-a')).status).toBe(404);
    const created = await asAdmin('POST', '/v1/order', 'client-a', createRequest(1));
    expect(created.status).toBe(201);
    const [madeForA] = created.body.order_numbers as string[];
    expect((await sandbox.call('GET', `/__sandbox/orders/${madeForA}`, { token: TOKEN_A })).status).toBe(200);
    expect((await sandbox.call('GET', `/__sandbox/orders/${madeForA}`, { token: TOKEN_B })).status).toBe(404);
  });

  it('answers 400 naming X-Sandbox-Client when the header is missing and there are several clients', async () => {
    const res = await asAdmin('GET', '/__sandbox/orders');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, errors: [{ field: 'header.x-sandbox-client', message: 'is required with an admin token' }] });
    expect(res.body.message).toContain('client-a, client-b');
  });

  it('answers 400 naming X-Sandbox-Client when it names no client', async () => {
    const res = await asAdmin('GET', '/__sandbox/orders', 'client-zzz');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, errors: [{ field: 'header.x-sandbox-client', message: 'names no client of this sandbox' }] });
  });

  it('answers 400 to a partner that names another client', async () => {
    const res = await sandbox.call('GET', '/__sandbox/orders', { token: TOKEN_A, headers: { 'X-Sandbox-Client': 'client-b' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'header.x-sandbox-client', message: 'names another client' }]);
    expect((await sandbox.call('GET', '/__sandbox/orders', { token: TOKEN_A, headers: { 'X-Sandbox-Client': 'client-a' } })).status).toBe(200);
  });

  it('tells each token what it is (GET /__sandbox/whoami): its role, the client it acts for, and whether it may act sandbox-wide; an admin needs no X-Sandbox-Client there', async () => {
    const whoami = async (token: string | null, client?: string) => {
      const res = await sandbox.call('GET', '/__sandbox/whoami', { token, headers: client ? { 'X-Sandbox-Client': client } : {} });
      return { status: res.status, body: res.body };
    };
    expect(await whoami(TOKEN_A)).toEqual({ status: 200, body: { role: 'partner', client: { id: 'client-a', name: 'client-a', couriers: ALL_COURIERS }, sandbox_wide: false } });
    expect(await whoami(READER_A)).toEqual({ status: 200, body: { role: 'read_only', client: { id: 'client-a', name: 'client-a', couriers: ALL_COURIERS }, sandbox_wide: false } });
    expect(await whoami(ADMIN)).toEqual({ status: 200, body: { role: 'admin', client: null, sandbox_wide: true } });
    expect(await whoami(ADMIN, 'client-b')).toEqual({ status: 200, body: { role: 'admin', client: { id: 'client-b', name: 'client-b', couriers: ALL_COURIERS }, sandbox_wide: true } });
    expect(await whoami(ADMIN, 'client-zzz')).toMatchObject({ status: 400, body: { errors: [{ field: 'header.x-sandbox-client', message: 'names no client of this sandbox' }] } });
    expect(await whoami(TOKEN_A, 'client-b')).toMatchObject({ status: 400, body: { errors: [{ field: 'header.x-sandbox-client', message: 'names another client' }] } });
    expect((await whoami(null)).status).toBe(401);
    expect((await whoami('token-nobody')).status).toBe(401);
  });

  it('lists the clients with the roles of their tokens, never the tokens', async () => {
    const res = await asAdmin('GET', '/__sandbox/clients');
    expect(res.status).toBe(200);
    expect(res.body.clients).toEqual([
      { id: 'client-a', name: 'client-a', roles: ['partner', 'read_only'], tokens: 2 },
      { id: 'client-b', name: 'client-b', roles: ['partner'], tokens: 1 },
    ]);
    expect(JSON.stringify(res.body)).not.toContain(TOKEN_A);
  });

  it('resets every client with POST /__sandbox/reset-all', async () => {
    const res = await asAdmin('POST', '/__sandbox/reset-all');
    expect(res.status).toBe(200);
    expect(res.body.clients['client-b'].orders).toBe(1);
    expect((await sandbox.call('GET', '/__sandbox/orders', { token: TOKEN_B })).body.total).toBe(0);
  });
});

describe("a client's settings in the config file", () => {
  it('are the same through each of its tokens: a read_only token sees the webhook URL that its partner token configured', async () => {
    const url = 'http://partner-a.test/hooks';
    const sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a', webhook: { url } }, { token: READER_A, id: 'client-a', role: 'read_only' }] });
    try {
      for (const token of [TOKEN_A, READER_A]) {
        expect((await sandbox.call('GET', '/__sandbox/webhook', { token })).body).toMatchObject({ url, source: 'config', state: 'enabled' });
        const endpoints = (await sandbox.call('GET', '/__sandbox/webhooks/endpoints', { token })).body.endpoints as Array<{ id: string; url: string }>;
        expect(endpoints[0]).toMatchObject({ url });
      }
    } finally {
      await sandbox.close();
    }
  });
});

describe('GET /__sandbox/whoami of a token limited to some couriers', () => {
  it('lists the couriers a create of it may use, in the fixtures\' order (none for an empty list), as GET /v1/couriers does', async () => {
    const sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a', couriers: ['sicepat', 'jnt'] }, { token: TOKEN_B, id: 'client-b', couriers: [] }], adminTokens: [ADMIN] });
    try {
      expect((await sandbox.call('GET', '/__sandbox/whoami', { token: TOKEN_A })).body.client).toEqual({ id: 'client-a', name: 'client-a', couriers: ['jnt', 'sicepat'] });
      const listed = (await sandbox.call('GET', '/v1/couriers', { token: TOKEN_A })).body.data.map((c: { courier_code: string }) => c.courier_code);
      expect(listed).toEqual(['jnt', 'sicepat']);
      expect((await sandbox.call('GET', '/__sandbox/whoami', { token: TOKEN_B })).body.client.couriers).toEqual([]);
      expect((await sandbox.call('GET', '/__sandbox/whoami', { token: ADMIN, headers: { 'X-Sandbox-Client': 'client-a' } })).body.client.couriers).toEqual(['jnt', 'sicepat']);
    } finally {
      await sandbox.close();
    }
  });
});

describe('GET /__sandbox/whoami of a client with several tokens', () => {
  it("gives the client's name whichever of its tokens asks (a named and an unnamed one), as the clients listing does", async () => {
    const sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a', name: 'Partner A' }, { token: READER_A, id: 'client-a', role: 'read_only' }] });
    try {
      for (const token of [TOKEN_A, READER_A]) expect((await sandbox.call('GET', '/__sandbox/whoami', { token })).body.client).toEqual({ id: 'client-a', name: 'Partner A', couriers: ALL_COURIERS });
      expect((await sandbox.call('GET', '/__sandbox/clients')).body.clients[0].name).toBe('Partner A');
    } finally {
      await sandbox.close();
    }
  });

  it("takes the name of the client's first token in the file: a later token's own name is not used", async () => {
    const sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a', name: 'Partner A' }, { token: READER_A, id: 'client-a', role: 'read_only', name: 'A reader' }] });
    try {
      for (const token of [TOKEN_A, READER_A]) expect((await sandbox.call('GET', '/__sandbox/whoami', { token })).body.client.name).toBe('Partner A');
      expect((await sandbox.call('GET', '/__sandbox/clients')).body.clients.map((c: { name: string }) => c.name)).toEqual(['Partner A']);
    } finally {
      await sandbox.close();
    }
  });
});

describe('without an admin token', () => {
  it('the only client may do everything, sandbox-wide operations included (the laptop and CI case)', async () => {
    const sandbox = await testSandbox({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: READER_A, id: 'client-a', read_only: true }] });
    try {
      expect((await sandbox.call('GET', '/__sandbox/clients')).status).toBe(200);
      expect((await sandbox.call('POST', '/__sandbox/reset-all')).status).toBe(200);
      // Its read_only token (the older `read_only: true`) still only reads.
      expect((await sandbox.call('GET', '/__sandbox/clients', { token: READER_A })).status).toBe(200);
      expect((await sandbox.call('POST', '/__sandbox/reset-all', { token: READER_A })).status).toBe(403);
      expect((await sandbox.call('POST', '/v1/order', { token: READER_A, body: createRequest(1) })).status).toBe(403);
      // Both know it: the dashboard offers the sandbox-wide actions by this.
      expect((await sandbox.call('GET', '/__sandbox/whoami')).body).toEqual({ role: 'partner', client: { id: 'client-a', name: 'client-a', couriers: ALL_COURIERS }, sandbox_wide: true });
      expect((await sandbox.call('GET', '/__sandbox/whoami', { token: READER_A })).body).toMatchObject({ role: 'read_only', sandbox_wide: true });
    } finally {
      await sandbox.close();
    }
  });

  it('with several clients, a partner may not do the sandbox-wide operations', async () => {
    const sandbox = await testSandbox();
    try {
      const res = await sandbox.call('GET', '/__sandbox/clients');
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('--admin-token');
      expect((await sandbox.call('POST', '/__sandbox/reset-all', { token: TOKEN_B })).status).toBe(403);
    } finally {
      await sandbox.close();
    }
  });

  it('an admin with one client acts for it without naming it', async () => {
    const sandbox = await testSandbox({ adminTokens: [ADMIN], clients: [{ token: TOKEN_A, id: 'client-a' }] });
    try {
      const created = await sandbox.call('POST', '/v1/order', { token: ADMIN, body: createRequest(1) });
      expect(created.status).toBe(201);
      expect((await sandbox.call('GET', '/__sandbox/orders', { token: TOKEN_A })).body.total).toBe(1);
      // With an admin token configured, even the only client no longer does sandbox-wide operations.
      expect((await sandbox.call('GET', '/__sandbox/clients', { token: TOKEN_A })).status).toBe(403);
    } finally {
      await sandbox.close();
    }
  });
});

describe('the admin-only guard (for endpoints outside the specs, such as metrics)', () => {
  const statusOf = (registry: ClientRegistry, header: string | undefined): number => {
    try {
      checkAdminOnly(registry, header);
      return 200;
    } catch (error) {
      return (error as ApiError).status;
    }
  };

  it('lets anyone through when no admin token is configured', () => {
    const registry = new ClientRegistry([{ token: TOKEN_A }, { token: TOKEN_B }]);
    expect(statusOf(registry, undefined)).toBe(200);
    expect(statusOf(registry, `Bearer ${TOKEN_A}`)).toBe(200);
  });

  it.each([
    [undefined, 401],
    ['Bearer not-a-token', 401],
    [`Bearer ${TOKEN_A}`, 403],
    [`Bearer ${READER_A}`, 403],
    [`Bearer ${ADMIN}`, 200],
  ])('with an admin token configured, answers %s with %i', (header, status) => {
    const registry = new ClientRegistry([{ token: TOKEN_A }, { token: READER_A, role: 'read_only' }], [ADMIN]);
    expect(statusOf(registry, header)).toBe(status);
  });
});
