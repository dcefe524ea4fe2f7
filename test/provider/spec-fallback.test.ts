import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSpec, PROVIDER_SPEC } from '../../src/spec/load.js';
import { startCli } from '../support/cli.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

const LABEL = { success: true, data: { order_no: '508734411209', label_url: 'https://labels.example/508734411209.pdf', format: 'A6' } };

/** A copy of the provider spec with one more operation that no handler of the sandbox knows. */
function fullerSpec(dir: string): string {
  const document = loadSpec(PROVIDER_SPEC);
  document.paths!['/v1/shipping-labels/{order_no}'] = {
    get: {
      operationId: 'getShippingLabel',
      summary: 'Shipping label of an order (an operation the sandbox has no handler for)',
      parameters: [{ name: 'order_no', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } }],
      responses: {
        '200': {
          description: 'The label.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['success', 'data'],
                properties: { success: { type: 'boolean' }, data: { type: 'object', required: ['label_url'], properties: { label_url: { type: 'string' } } } },
              },
              examples: { a6: { value: LABEL } },
            },
          },
        },
        '400': { $ref: '#/components/responses/BadRequest' },
        '401': { $ref: '#/components/responses/Unauthorized' },
      },
    },
  };
  const path = join(dir, 'fuller-openapi.json');
  writeFileSync(path, JSON.stringify(document));
  return path;
}

describe('an operation in the spec with no handler', () => {
  const dir = tempDir();
  let sandbox: TestSandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('is answered from the spec example when a fuller spec is served (providerSpec option)', async () => {
    sandbox = await testSandbox({ providerSpec: fullerSpec(dir()) });
    const res = await sandbox.call('GET', '/v1/shipping-labels/508734411209');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(LABEL);
  });

  it('is still routed, secured and validated from that spec', async () => {
    sandbox = await testSandbox({ providerSpec: fullerSpec(dir()) });
    expect((await sandbox.call('GET', '/v1/shipping-labels/508734411209', { token: null })).status).toBe(401);
    const bad = await sandbox.call('GET', '/v1/shipping-labels/not-a-number');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ field: 'order_no', message: expect.stringContaining('digits only') }]);
    const served = await sandbox.call('GET', '/__sandbox/openapi.json');
    expect(Object.keys(served.body.paths)).toContain('/v1/shipping-labels/{order_no}');
  });

  it('serves a value of a plain-text parameter that spells another path of the spec, whose own value is then missing', async () => {
    // /v1/shipping-labels/{name} takes any text, "bulk" included; /v1/shipping-labels/bulk/{id} is another operation.
    const document = JSON.parse(readFileSync(fullerSpec(dir()), 'utf8')) as { paths: Record<string, { get: { operationId: string; parameters: unknown[] } }> };
    const labels = document.paths['/v1/shipping-labels/{order_no}']!;
    document.paths['/v1/shipping-labels/bulk/{id}'] = { get: { ...labels.get, operationId: 'getBulkLabel', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } }] } };
    labels.get.parameters = [{ name: 'order_no', in: 'path', required: true, schema: { type: 'string' } }];
    const path = join(dir(), 'shared-prefix.json');
    writeFileSync(path, JSON.stringify(document));
    sandbox = await testSandbox({ providerSpec: path });
    for (const served of ['/v1/shipping-labels/bulk', '/v1/shipping-labels/Bulk', '/v1/shipping-labels/bulk/7']) {
      const res = await sandbox.call('GET', served);
      expect([served, res.status, res.body]).toEqual([served, 200, LABEL]);
    }
  });

  it('keeps the sandbox behaviour of the operations it has handlers for', async () => {
    sandbox = await testSandbox({ providerSpec: fullerSpec(dir()) });
    const res = await sandbox.call('GET', '/v1/area/search?q=tebet');
    expect(res.body.data[0].district_id).toBe('317101');
  });

  it('is answered when the CLI is given --spec', async () => {
    const cli = await startCli(['--port', '0', '--data', ':memory:', '--token', 'spec-token', '--log-level', 'silent', '--spec', fullerSpec(dir())]);
    try {
      const res = await fetch(`${cli.url}/v1/shipping-labels/508734411209`, { headers: { authorization: 'Bearer spec-token' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(LABEL);
    } finally {
      await cli.stop();
    }
  });
});
