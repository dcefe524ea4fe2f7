import { describe, expect, it } from 'vitest';
import { servedSpec, servedSpecText } from '../../src/spec/served.js';
import type { OpenApiDocument } from '../../src/spec/load.js';

describe('a spec as the sandbox serves it, as JSON text', () => {
  const documents = {
    'without servers': { openapi: '3.1.0', info: { title: 'T', version: '1' }, paths: { '/v1/order': { post: { operationId: 'createOrder' } } } },
    'with servers of its own, in the middle': { openapi: '3.1.0', servers: [{ url: 'https://provider.example' }], info: { title: 'T', version: '1' }, paths: {} },
  } as unknown as Record<string, OpenApiDocument>;

  it.each(Object.entries(documents))('is the JSON of servedSpec, for every base URL (%s)', (_, document) => {
    for (const url of ['http://127.0.0.1:4010', 'http://a"b\\c:1', 'https://sandbox.example/base']) {
      expect(servedSpecText(document, url)).toBe(JSON.stringify(servedSpec(document, url)));
      expect(JSON.parse(servedSpecText(document, url)).servers[0].url).toBe(url);
    }
  });
});
