import type { OptionSpec } from './option-spec.js';
import type { ResolvedOptions, SandboxOptions } from './options.js';
import { OPTIONS } from './table.js';

/**
 * Fills in the defaults and reads every option once; throws an OptionError naming the
 * first option that cannot be used.
 */
export function resolveOptions(options: SandboxOptions): ResolvedOptions {
  const resolved: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTIONS) as [keyof SandboxOptions, OptionSpec<unknown, unknown>][]) {
    resolved[key] = spec.resolve(options[key] ?? spec.default);
  }
  return resolved as unknown as ResolvedOptions;
}
