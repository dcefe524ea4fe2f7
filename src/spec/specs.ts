import { statSync } from 'node:fs';
import { compileSpec, type CompiledSpec } from './compile.js';
import { CONTROL_SPEC, loadSpec, PROVIDER_SPEC } from './load.js';
import { withSandboxAnswers, type AnswerLimits } from './sandbox-answers.js';

/** The two specs a sandbox serves, compiled. */
export interface Specs {
  provider: CompiledSpec;
  control: CompiledSpec;
}

/**
 * Compiled specs, kept per process: compiling them (YAML parse, then one Ajv validator
 * per operation) is most of a sandbox's start-up, and a test process or a process with
 * several sandboxes would otherwise pay it each time. Keyed by the provider spec's file
 * (path, size, modification time) and the limits written into it. A compiled spec is
 * never changed after it is built, so sandboxes can share it.
 */
const compiled = new Map<string, Specs>();

/**
 * Applies `--max-items` to the create request's `items` and to its answer's `order_numbers`,
 * one per item (a spec swapped in with --spec may not have those schemas): a client that
 * checks answers against the served spec takes a create of that many.
 */
function limitItems(document: ReturnType<typeof loadSpec>, maxItems: number): void {
  const schemas = (document.components as { schemas?: Record<string, { properties?: Record<string, { maxItems?: number }> }> } | undefined)?.schemas;
  const items = schemas?.CreateOrderRequest?.properties?.items;
  if (items) items.maxItems = maxItems;
  const numbers = schemas?.CreateOrderResponse?.properties?.order_numbers;
  if (numbers) numbers.maxItems = maxItems;
}

/** The specs as served: `--max-items` in the create's schemas, the limits of `limits` in the examples of the sandbox's own answers. */
export function compiledSpecs(providerSpec: string, maxItems: number, limits: AnswerLimits): Specs {
  const file = statSync(providerSpec);
  const key = JSON.stringify([providerSpec, file.size, file.mtimeMs, maxItems, limits.bodyLimit, limits.rateLimit, limits.maxHeaderSize, limits.databaseUrl !== undefined]);
  let specs = compiled.get(key);
  if (!specs) {
    const document = loadSpec(providerSpec);
    limitItems(document, maxItems);
    // The bundled specs compile whole in the tests: their validators wait for first use. Another spec (--spec) is compiled now, so that what cannot be served stops the start.
    specs = {
      provider: compileSpec(withSandboxAnswers(document, limits), 'provider', { lazy: providerSpec === PROVIDER_SPEC }),
      control: compileSpec(withSandboxAnswers(loadSpec(CONTROL_SPEC), limits), 'control', { lazy: true }),
    };
    compiled.set(key, specs);
  }
  return specs;
}
