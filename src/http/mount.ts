import type { RequestHandler } from 'express';
import type { CompiledSpec } from '../spec/index.js';
import { ApiError, invalid, messages } from './errors.js';
import type { Handler, HandlerMap } from './handler.js';
import { serveOperation, type PipelineOptions, type ServeOperation } from './pipeline/index.js';
import { sendError } from './respond.js';
import { noteFailure } from './served.js';

/** A spec's pipeline options, its handlers by operationId, and what answers an operation without one. */
export interface MountOptions extends PipelineOptions {
  handlers: HandlerMap;
  /** Answers operations that have no handler (spec-driven answers). */
  fallback: Handler;
}

/** A path template of the spec, compiled once: its pattern, parameter names and operations by method. */
interface PathRoute {
  pattern: RegExp;
  names: string[];
  methods: Map<string, ServeOperation>;
  allow: string;
}

function compilePath(template: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const name = /^\{([^}]+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      names.push(name);
      return '([^/]+)';
    })
    .join('');
  return { pattern: new RegExp(`^${source}/?$`, 'i'), names };
}

function decodeParams(route: PathRoute, match: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  route.names.forEach((name, i) => {
    try {
      params[name] = decodeURIComponent(match[i + 1]!);
    } catch {
      throw invalid([{ field: name, message: 'is not valid percent-encoded text' }]);
    }
  });
  return params;
}

/**
 * Serves every operation of a compiled spec: security, validation, then the
 * interceptors, then the operation's handler (or the fallback). A path with no
 * operation for the method answers 405 with `Allow`; a path the spec does not have
 * goes on to the next middleware. The routes are compiled once into one table and
 * matched in one pass (paths without parameters first), without express's router.
 */
export function mountSpec(spec: CompiledSpec, options: MountOptions): RequestHandler {
  const routes = new Map<string, PathRoute>();
  for (const op of spec.operations) {
    const route = routes.get(op.path) ?? { ...compilePath(op.path), methods: new Map(), allow: '' };
    routes.set(op.path, route);
    route.methods.set(op.method.toUpperCase(), serveOperation(op, options.handlers[op.operationId] ?? options.fallback, options));
  }
  for (const route of routes.values()) {
    const methods = [...route.methods.keys()];
    route.allow = (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');
  }
  const table = [...routes.values()].sort((a, b) => a.names.length - b.names.length);
  return (req, res, next) => {
    for (const route of table) {
      const match = route.pattern.exec(req.path);
      if (!match) continue;
      const serve = route.methods.get(req.method) ?? (req.method === 'HEAD' ? route.methods.get('GET') : undefined);
      if (!serve) {
        res.setHeader('Allow', route.allow);
        return sendError(res, new ApiError(405, messages.methodNotAllowed(req.method, route.allow.split(', '))));
      }
      let params: Record<string, string>;
      try {
        params = decodeParams(route, match);
      } catch (error) {
        return sendError(res, error);
      }
      // A failure even the envelope could not answer drops the connection; it never ends the process.
      return void serve(req, res, params).catch((error: unknown) => {
        noteFailure(res, error);
        res.destroy();
      });
    }
    next();
  };
}
