import type { IncomingHttpHeaders } from 'node:http';
import type { Request, Response } from 'express';
import type { Client } from '../config/clients.js';
import type { CompiledOperation } from '../spec/compile.js';

/** What an operation handler gets: the validated request, its client, and the raw objects for streams. */
export interface OperationInput {
  operation: CompiledOperation;
  /** The authenticated client; undefined only on operations without security. */
  client: Client | undefined;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** e.g. `http://127.0.0.1:4010`, from the request's Host header. */
  baseUrl: string;
  raw: { req: Request; res: Response };
}

/** An answer: a status with a JSON body, or `streamed` when the handler wrote the response itself. */
export type Reply =
  | {
      status: number;
      body?: unknown;
      headers?: Record<string, string>;
      /** The body already written out (JSON, unless `type` says otherwise), sent as it is. */
      serialized?: string;
      /** Media type of `serialized` when it is not JSON. */
      type?: string;
    }
  | { streamed: true };

export type Handler = (input: OperationInput) => Reply | Promise<Reply>;

/** Handlers keyed by operationId. */
export type HandlerMap = Record<string, Handler>;

/**
 * Wraps the handling of one request: faults, Prefer answers and the request journal
 * plug in here. Call `next()` to go on.
 */
export type Interceptor = (input: OperationInput, next: () => Promise<Reply>) => Promise<Reply>;

/** The client of an input on a secured operation. */
export function clientOf(input: OperationInput): Client {
  if (!input.client) throw new Error(`${input.operation.operationId} needs security in its spec`);
  return input.client;
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): Reply => ({ status, body, headers });
