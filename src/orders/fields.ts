import { deref } from '../spec/index.js';
import type { OpenApiDocument } from '../spec/index.js';

/** The fields of a create request the sandbox keeps: the sender's (the request's own, but `items` and `courier_code`) and an item's. */
export interface CreateFields {
  sender: ReadonlySet<string>;
  item: ReadonlySet<string>;
}

/** A schema's `properties` names, following `$ref`s; undefined when it has none to read. */
function propertyNames(document: OpenApiDocument, schema: unknown): Set<string> | undefined {
  const properties = (deref(document, schema) as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties && typeof properties === 'object' ? new Set(Object.keys(properties)) : undefined;
}

/**
 * The create request's fields as the served spec has them (the bundled one, or a fuller
 * one given with --spec), for `keepKnown`. Undefined when the spec's `createOrder` has no
 * body schema with properties to read: then everything sent is kept.
 */
export function createFields(document: OpenApiDocument): CreateFields | undefined {
  try {
    for (const item of Object.values(document.paths ?? {})) {
      for (const operation of Object.values(item ?? {})) {
        const op = operation as { operationId?: string; requestBody?: unknown } | undefined;
        if (op?.operationId !== 'createOrder') continue;
        const body = deref(document, op.requestBody) as { content?: Record<string, { schema?: unknown }> } | undefined;
        const schema = body?.content?.['application/json']?.schema;
        const request = propertyNames(document, schema);
        const itemsSchema = (deref(document, schema) as { properties?: { items?: unknown } } | undefined)?.properties?.items;
        const item = propertyNames(document, (deref(document, itemsSchema) as { items?: unknown } | undefined)?.items);
        if (!request || !item) return undefined;
        request.delete('items');
        request.delete('courier_code');
        return { sender: request, item };
      }
    }
  } catch {
    // A $ref the spec cannot resolve: validation already refuses what it cannot read.
  }
  return undefined;
}

/**
 * Only the fields the spec knows, in the order they were sent. Fields it does not know are
 * accepted and ignored (the provider's may be): kept, a large field of a client's own
 * would be stored in, and answered with, every order of its create.
 */
export function keepKnown<T extends object>(value: T, known: ReadonlySet<string> | undefined): T {
  if (!known) return value;
  let unknown = false;
  for (const key in value) {
    if (!known.has(key)) {
      unknown = true;
      break;
    }
  }
  if (!unknown) return value;
  // Key by key, no entry built for each: a body may hold as many fields as its size allows.
  const kept: Record<string, unknown> = {};
  for (const key in value) if (known.has(key)) kept[key] = value[key];
  return kept as T;
}

/**
 * A create request's sender fields: those of `known` (see keepKnown), or without it every
 * field sent but `items` and `courier_code`. `known` never holds those two, so the request
 * is read in place, not copied whole first.
 */
export function senderFields<T extends { items?: unknown; courier_code?: unknown }>(request: T, known: ReadonlySet<string> | undefined): Omit<T, 'items' | 'courier_code'> {
  if (known) return keepKnown(request, known);
  const { items: _items, courier_code: _courier, ...sent } = request;
  return sent;
}

/**
 * A create's body as the provider reads it: the fields the served spec knows, the sender's
 * and each item's (unknown ones are ignored, see keepKnown); the body as sent when the spec
 * gives no fields. Judging a refused create compares bodies so (see the readiness report).
 */
export function asTheProviderReads(fields: CreateFields | undefined): (body: Record<string, unknown>) => Record<string, unknown> {
  if (!fields) return (body) => body;
  return (body) => ({
    ...senderFields(body, fields.sender),
    courier_code: body.courier_code,
    items: Array.isArray(body.items) ? body.items.map((item: unknown) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? keepKnown(item, fields.item) : item)) : body.items,
  });
}
