import type { Services } from '../../src/app/services.js';
import type { CompiledOperation } from '../../src/spec/compile.js';
import type { RawRequest, RawResponse } from './http-client.js';

function operationFor(services: Services, method: string, path: string): CompiledOperation | undefined {
  const bare = path.split('?')[0]!;
  for (const spec of [services.specs.control, services.specs.provider]) {
    for (const op of spec.operations) {
      if (op.method === method.toLowerCase() && new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`).test(bare)) return op;
    }
  }
  return undefined;
}

/**
 * What the fuzz property demands of every answer: no 5xx; every 4xx the JSON error
 * envelope (the spec's ErrorResponse schema); a JSON success as the operation's spec
 * documents it. Returns the problem, or undefined when the answer is fine.
 */
export function problemWith(services: Services, req: RawRequest, res: RawResponse): string | undefined {
  if (res.status >= 500 || res.status < 100) return `status ${res.status}: ${res.text.slice(0, 300)}`;
  const type = String(res.headers['content-type'] ?? '');
  const isJson = type.includes('application/json');
  if (res.status >= 400) {
    if (req.method === 'HEAD') return undefined;
    if (!isJson) return `a ${res.status} answered as "${type}", not the JSON envelope: ${res.text.slice(0, 200)}`;
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return `a ${res.status} whose body is not JSON: ${res.text.slice(0, 200)}`;
    }
    // Any operation's 400 response is the envelope schema (ErrorResponse).
    const problems = services.specs.provider.byId.get('createOrder')!.validateResponse(400, body);
    return problems.length > 0 ? `a ${res.status} that is not the envelope: ${JSON.stringify(problems)} ${res.text.slice(0, 200)}` : undefined;
  }
  if (!isJson || req.method === 'HEAD' || res.status === 204) return undefined;
  const op = operationFor(services, req.method, req.path);
  if (!op) return undefined;
  const problems = op.validateResponse(res.status, JSON.parse(res.text));
  return problems.length > 0 ? `${op.operationId} ${res.status} does not match the spec: ${JSON.stringify(problems).slice(0, 400)}` : undefined;
}
