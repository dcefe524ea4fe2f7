/**
 * The worker thread of LargeBodies: parses and validates a large JSON body off the event
 * loop. Given the documents the sandbox compiled, it compiles them the same way, so its
 * problems are the ones the request's own stage would find; it answers each check with
 * the refusal, the body's problems, or none.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { compileSpec, type CompiledSpec } from '../spec/index.js';
import { ApiError } from './errors.js';
import { parseJsonBytes } from './json-bytes.js';
import type { BodyCheck, BodyVerdict, LargeBodySource } from './large-bodies.js';

const source = workerData as LargeBodySource;
const specs: Partial<Record<BodyCheck['spec'], CompiledSpec>> = {};

function check({ spec, operationId, bytes }: BodyCheck): BodyVerdict {
  let body: unknown;
  try {
    body = parseJsonBytes(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    if (error instanceof ApiError) return { refused: { status: error.status, message: error.message, errors: error.errors } };
    throw error;
  }
  const op = (specs[spec] ??= compileSpec(source[spec], spec, { lazy: true })).byId.get(operationId);
  return { problems: op ? op.validateBody(body) : [] };
}

parentPort!.on('message', (message: BodyCheck & { id: number }) => {
  try {
    parentPort!.postMessage({ id: message.id, verdict: check(message) });
  } catch (error) {
    parentPort!.postMessage({ id: message.id, failed: String((error as Error)?.message ?? error) });
  }
});
