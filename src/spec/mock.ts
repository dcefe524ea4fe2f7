import { ApiError } from '../http/errors.js';
import { json, type Handler } from '../http/handler.js';
import { deref, type OpenApiDocument } from './load.js';

interface MediaType {
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

/** The documented example of an operation's answer with this status, if the spec has one. */
export function exampleOf(document: OpenApiDocument, definition: Record<string, unknown>, status: number, name?: string): unknown {
  const response = deref(document, (definition.responses as Record<string, unknown> | undefined)?.[String(status)]) as
    | { content?: Record<string, MediaType> }
    | undefined;
  const media = response?.content?.['application/json'];
  if (!media) return undefined;
  if (name !== undefined) return media.examples?.[name]?.value;
  if (media.example !== undefined) return media.example;
  const first = Object.values(media.examples ?? {})[0];
  return first?.value;
}

/**
 * Answers an operation that has no handler from its spec: the first documented 2xx
 * status with its example.
 */
export function specAnswer(document: OpenApiDocument): Handler {
  return ({ operation }) => {
    const status = operation.statuses.filter((s) => s >= 200 && s < 300).sort()[0] ?? 200;
    const body = exampleOf(document, operation.definition, status);
    if (body === undefined) throw new ApiError(501, `${operation.operationId} has no example in the spec to answer with.`);
    return json(status, body);
  };
}
