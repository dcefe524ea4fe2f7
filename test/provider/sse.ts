import { get, type ClientRequest } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenApiDocument } from '../../src/spec/load.js';

/** One server-sent event as a client reads it. */
export interface SseEvent {
  event: string;
  id?: string;
  data: unknown;
}

export interface SseStream {
  status: number;
  contentType: string;
  /** Resolves with every event once the server ends the stream. */
  done: Promise<SseEvent[]>;
  request: ClientRequest;
}

/** Parses one `event:/id:/data:` block. */
function parseBlock(block: string): SseEvent {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const at = line.indexOf(':');
    if (at <= 0) continue;
    fields[line.slice(0, at)] = line.slice(at + 1).trimStart();
  }
  return { event: fields.event ?? 'message', ...(fields.id ? { id: fields.id } : {}), data: JSON.parse(fields.data ?? 'null') };
}

/**
 * Opens a real streaming GET and reads its events as they arrive; `onEvent` sees each
 * one at once (e.g. to disconnect after the first).
 */
export function openStream(url: string, token: string, onEvent: (event: SseEvent, request: ClientRequest) => void = () => {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = get(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      const events: SseEvent[] = [];
      let buffer = '';
      const done = new Promise<SseEvent[]>((finish, fail) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = parseBlock(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            events.push(event);
            onEvent(event, request);
          }
        });
        res.on('end', () => finish(events));
        // Destroying the request on purpose ends the response with 'aborted': that is the end of the stream.
        res.on('error', (error) => (request.destroyed ? finish(events) : fail(error)));
        res.on('close', () => finish(events));
      });
      resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), done, request });
    });
    request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
  });
}

/** A validator of one schema of the provider spec's `components.schemas`. */
export function schemaValidator(document: OpenApiDocument, name: string): (data: unknown) => unknown[] {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false });
  ajv.addSchema(document, 'provider');
  const validate = ajv.compile({ $ref: `provider#/components/schemas/${name}` });
  return (data) => (validate(data) ? [] : (validate.errors ?? []));
}
