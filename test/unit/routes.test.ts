import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlModule } from '../../src/app/modules/control.js';
import { ordersModule } from '../../src/app/modules/orders.js';
import { accessOf, ROUTES, routedHandlers } from '../../src/http/routes.js';
import { scopeOf } from '../../src/http/roles.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

describe('the route table (http/routes.ts)', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await testSandbox();
  });
  afterAll(() => sandbox.close());

  const operations = () => [...sandbox.services.specs.provider.operations, ...sandbox.services.specs.control.operations];

  it('names every operation of both specs that a module of the sandbox serves, and no other', () => {
    const served = sandbox.modules.flatMap((m) => Object.keys(m.handlers ?? {}));
    const withHandler = operations()
      .map((op) => op.operationId)
      .filter((id) => served.includes(id) || ['orders', 'control'].includes(ROUTES[id]?.by ?? ''));
    expect(Object.keys(ROUTES).sort()).toEqual(withHandler.sort());
  });

  it('puts each operation in the spec that has it', () => {
    const specOf = (id: string) => (sandbox.services.specs.provider.operations.some((op) => op.operationId === id) ? 'provider' : 'control');
    expect(Object.fromEntries(Object.entries(ROUTES).map(([id, route]) => [id, route.spec]))).toEqual(Object.fromEntries(Object.keys(ROUTES).map((id) => [id, specOf(id)])));
  });

  it('hands each spec only the handlers of its own operations, so a provider operation named like a control one is never served by it', () => {
    const { provider, control } = routedHandlers([ordersModule(sandbox.services), controlModule(sandbox.services, [])]);
    expect(Object.keys(provider).sort()).toEqual(['cancelOrder', 'createOrder', 'getOrderDetail', 'trackOrder']);
    expect(Object.keys(control)).toContain('resetSandbox');
    expect(Object.keys(control)).not.toContain('createOrder');
  });

  it('gives each operation the access the role rules enforce from its method, security and scope', () => {
    const table = Object.fromEntries(operations().filter((op) => ROUTES[op.operationId]).map((op) => [op.operationId, ROUTES[op.operationId]!.access]));
    const enforced = Object.fromEntries(operations().filter((op) => ROUTES[op.operationId]).map((op) => [op.operationId, accessOf(op)]));
    expect(table).toEqual(enforced);
  });

  it('refuses at start a module that serves an operation the table gives to another', () => {
    const stray = { ...ordersModule(sandbox.services), name: 'webhooks' };
    expect(() => routedHandlers([stray])).toThrow(/The webhooks module serves createOrder, which the route table \(http\/routes.ts\) gives to orders/);
  });

  it('refuses at start a module that serves an operation the table does not list', () => {
    const unlisted = { name: 'extra', handlers: { shipToTheMoon: () => ({ status: 200 }) } };
    expect(() => routedHandlers([unlisted])).toThrow(/serves shipToTheMoon, which the route table \(http\/routes.ts\) does not list/);
  });
});

describe('x-sandbox-read: a read asked in a body', () => {
  const marked = (method: string, path: string) => ({ method, path, secured: true, definition: { 'x-sandbox-read': true } });
  it('makes a sandbox operation a read, open to read_only tokens', () => {
    expect(accessOf(marked('post', '/__sandbox/requests/count'))).toBe('read');
    expect(accessOf({ ...marked('post', '/__sandbox/requests/count'), definition: {} })).toBe('write');
  });

  it('is not honoured on a provider path: a --spec file cannot open a cancel to read_only tokens', () => {
    expect(accessOf(marked('post', '/v1/order/cancel'))).toBe('write');
    expect(accessOf(marked('post', '/v1/order'))).toBe('write');
  });
});

describe('x-sandbox-scope: what an operation acts on', () => {
  const scoped = (scope: string, path: string) => ({ method: 'get', path, secured: true, definition: { 'x-sandbox-scope': scope } });
  it('makes a sandbox operation sandbox-wide (sandbox) or about the token (caller, a read)', () => {
    expect(accessOf(scoped('sandbox', '/__sandbox/clients'))).toBe('sandbox');
    expect(accessOf(scoped('caller', '/__sandbox/whoami'))).toBe('read');
    expect(scopeOf(scoped('caller', '/__sandbox/whoami'))).toBe('caller');
  });

  it('is not honoured on a provider path: a --spec file cannot make a tracking read admin-only or free of X-Sandbox-Client', () => {
    expect(accessOf(scoped('sandbox', '/v1/order/tracking/{order_no}'))).toBe('read');
    expect(scopeOf(scoped('caller', '/v1/order/tracking/{order_no}'))).toBe('client');
  });
});
