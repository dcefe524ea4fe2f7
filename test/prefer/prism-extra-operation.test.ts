import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSpec, PROVIDER_SPEC } from '../../src/spec/load.js';
import { startCli } from '../support/cli.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';
import { onPostgres } from '../support/store-kind.js';
import { tempDir } from '../support/tmp.js';

const A6 = { success: true, data: { order_no: '508734411209', label_url: 'https://labels.example/508734411209.pdf', format: 'A6' } };
const A4 = { success: true, data: { order_no: '508734411209', label_url: 'https://labels.example/508734411209-a4.pdf', format: 'A4' } };
const GONE = { success: false, message: 'The label has expired.', errors: [] };

/**
 * The bundled provider spec plus one operation no handler of the sandbox knows:
 * a label with two named examples, a schema strict enough that generated data shows,
 * and a 410 of its own.
 */
function fullerSpec(dir: string): string {
  const document = loadSpec(PROVIDER_SPEC);
  document.paths!['/v1/order/{order_no}/label'] = {
    get: {
      operationId: 'getOrderLabel',
      summary: 'The shipping label of an order',
      parameters: [{ name: 'order_no', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } }],
      responses: {
        '200': {
          description: 'The label.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                required: ['success', 'data'],
                properties: {
                  success: { type: 'boolean', const: true },
                  data: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['order_no', 'label_url', 'format'],
                    properties: {
                      order_no: { type: 'string', pattern: '^[0-9]{12}$' },
                      label_url: { type: 'string', format: 'uri' },
                      format: { type: 'string', enum: ['A4', 'A6'] },
                    },
                  },
                },
              },
              examples: { a6: { value: A6 }, a4: { value: A4 } },
            },
          },
        },
        '400': { $ref: '#/components/responses/BadRequest' },
        '401': { $ref: '#/components/responses/Unauthorized' },
        '410': { description: 'Expired.', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' }, examples: { gone: { value: GONE } } } } },
      },
    },
  };
  const path = join(dir, 'openapi-with-label.json');
  writeFileSync(path, JSON.stringify(document));
  return path;
}

const LABEL = '/v1/order/508734411209/label';

describe('GET /v1/order/{order_no}/label, an operation a swapped-in spec brings (answered by Prism)', () => {
  const dir = tempDir();
  let sandbox: TestSandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });
  const call = async (headers: Record<string, string> = {}) => {
    sandbox ??= await testSandbox({ providerSpec: fullerSpec(dir()) });
    return sandbox.call('GET', LABEL, { headers });
  };

  it('answers its first example with its lowest 2xx status', async () => {
    const res = await call();
    expect(res.status).toBe(200);
    expect(res.body).toEqual(A6);
  });

  it('answers Prefer: code=410 with the documented 410 example', async () => {
    const res = await call({ Prefer: 'code=410' });
    expect(res.status).toBe(410);
    expect(res.body).toEqual(GONE);
    expect(res.headers['preference-applied']).toBe('code=410');
  });

  it('answers Prefer: example=a4 with that example', async () => {
    const res = await call({ Prefer: 'example=a4' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(A4);
  });

  it('answers Prefer: dynamic=true with data generated from its schema, not an example', async () => {
    const res = await call({ Prefer: 'dynamic=true' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { order_no: expect.stringMatching(/^[0-9]{12}$/), format: expect.stringMatching(/^A[46]$/) } });
    expect([A4, A6]).not.toContainEqual(res.body);
  });

  it('returns 400 naming header.prefer for a status the operation does not document', async () => {
    const res = await call({ Prefer: 'code=404' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'header.prefer', message: 'code must be one of: 200, 400, 401, 410, 413, 415, 429, 431, 503' }]);
  });

  it('lists each example once when an example name is unknown', async () => {
    const res = await call({ Prefer: 'example=a5' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'header.prefer', message: `example must be one of: a6 (200), a4 (200), invalidField (400), missingToken (401), gone (410), tooLarge (413), notJson (415), rateLimited (429), headersTooLarge (431), ${onPostgres ? 'databaseUnreachable' : 'stopping'} (503)` }]);
  });

  it('answers the same generated data to two runs of the CLI with the same --seed', async () => {
    const spec = fullerSpec(dir());
    const answer = async () => {
      const cli = await startCli(['--port', '0', '--data', ':memory:', '--token', 'seed-token', '--log-level', 'silent', '--seed', 'prism-42', '--spec', spec]);
      try {
        const res = await fetch(`${cli.url}${LABEL}`, { headers: { authorization: 'Bearer seed-token', prefer: 'dynamic=true' } });
        expect(res.status).toBe(200);
        return await res.json();
      } finally {
        await cli.stop();
      }
    };
    const first = await answer();
    expect(first).not.toEqual(A6);
    expect(await answer()).toEqual(first);
  });
});
