import { Router, type Request, type Response } from 'express';
import type { ClientRegistry } from '../config/clients.js';
import type { CompiledOperation, CompiledSpec } from '../spec/compile.js';
import { authenticate } from './auth.js';
import { ApiError, invalid, messages, type FieldError } from './errors.js';
import type { Handler, HandlerMap, Interceptor, OperationInput, Reply } from './handler.js';
import { sendError, sendReply } from './respond.js';

export interface MountOptions {
  registry: ClientRegistry;
  handlers: HandlerMap;
  /** Answers operations that have no handler (spec-driven answers). */
  fallback: Handler;
  interceptors: Interceptor[];
}

/** A request served from a spec, as observers (the request journal) see it once it ends. */
export interface ServedRequest {
  input: OperationInput;
  /** The field errors of the 400 the request was rejected with (schema or rule violations). */
  violations: FieldError[];
}

/** The spec request a response answers, or undefined for responses that no operation served. */
export const servedRequest = (res: Response): ServedRequest | undefined => res.locals.served as ServedRequest | undefined;

const isJson = (type: string | undefined): boolean => !!type && /^application\/([\w.+-]*\+)?json\b/i.test(type);
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

function baseUrlOf(req: Request): string {
  return `${req.protocol}://${req.headers.host ?? 'localhost'}`;
}

/** Checks security, content type and the spec's schemas; throws the 401/415/400. */
function check(op: CompiledOperation, input: OperationInput, registry: ClientRegistry): void {
  if (op.secured) input.client = authenticate(registry, input.headers.authorization);
  const { req } = input.raw;
  if (op.body !== 'none' && hasBody(req) && !isJson(req.headers['content-type'])) {
    throw new ApiError(415, messages.unsupportedMediaType(req.headers['content-type'] ?? 'none'));
  }
  if (op.body === 'required' && input.body === undefined) throw invalid([{ field: 'body', message: 'is required' }], messages.bodyRequired);
  const problems = op.validateRequest({ path: input.params, query: input.query, headers: input.headers, body: input.body });
  if (problems.length > 0) throw invalid(problems);
}

/**
 * Serves every operation of a compiled spec: security, validation, then the
 * interceptors, then the operation's handler (or the fallback). A path with no
 * operation for the method answers 405 with `Allow`.
 */
export function mountSpec(spec: CompiledSpec, options: MountOptions): Router {
  const router = Router();
  const methodsByPath = new Map<string, string[]>();
  for (const op of spec.operations) {
    methodsByPath.set(op.expressPath, [...(methodsByPath.get(op.expressPath) ?? []), op.method.toUpperCase()]);
    const handler = options.handlers[op.operationId] ?? options.fallback;
    const route = async (req: Request, res: Response): Promise<void> => {
      const input: OperationInput = {
        operation: op,
        client: undefined,
        params: { ...(req.params as Record<string, string>) },
        query: { ...(req.query as Record<string, unknown>) },
        headers: req.headers,
        body: op.body === 'none' ? undefined : req.body,
        baseUrl: baseUrlOf(req),
        raw: { req, res },
      };
      res.locals.operationId = op.operationId;
      const served: ServedRequest = { input, violations: [] };
      res.locals.served = served;
      try {
        check(op, input, options.registry);
        res.locals.clientId = input.client?.id;
        const run = options.interceptors.reduceRight<() => Promise<Reply>>(
          (next, interceptor) => () => interceptor(input, next),
          async () => handler(input),
        );
        sendReply(res, await run());
      } catch (error) {
        if (error instanceof ApiError && error.status === 400) served.violations = error.errors;
        sendError(res, error);
      }
    };
    (router as unknown as Record<string, (path: string, fn: typeof route) => void>)[op.method]!(op.expressPath, route);
  }
  for (const [path, methods] of methodsByPath) {
    const allowed = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    router.all(path, (req, res) => {
      res.setHeader('Allow', allowed.join(', '));
      sendError(res, new ApiError(405, messages.methodNotAllowed(req.method, allowed)));
    });
  }
  return router;
}
