import type { OptionSpec } from './option-spec.js';
import type { ResolvedOptions, SandboxOptions } from './options.js';
import { fail } from './parsers.js';
import { OPTIONS } from './table.js';

/**
 * Fills in the defaults and reads every option once; throws an OptionError naming the
 * first option that cannot be used, alone or with the clock it was given with (a start
 * that only a manual clock has, a speed that only a real clock runs at: dropped without a
 * word, a CI job that meant a fixed 2026-01-01 would get today's dates).
 */
export function resolveOptions(options: SandboxOptions): ResolvedOptions {
  // A misspelt option (tokenz) dropped without a word would start a sandbox its tests cannot use: named, as the CLI names a misspelt flag.
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(OPTIONS, key) && (options as Record<string, unknown>)[key] !== undefined) {
      fail(key as keyof SandboxOptions, `${key} is not an option of the sandbox; the options are ${Object.keys(OPTIONS).join(', ')}.`);
    }
  }
  const resolved: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTIONS) as [keyof SandboxOptions, OptionSpec<unknown, unknown>][]) {
    resolved[key] = spec.resolve(options[key] ?? spec.default);
  }
  const { clock, clockStart, speed } = resolved as unknown as ResolvedOptions;
  if (clock !== 'manual' && clockStart !== undefined) fail('clockStart', 'clockStart is where a manual clock starts, and the clock is real: add --clock manual (SANDBOX_CLOCK=manual), or leave the start out.');
  if (clock === 'manual' && speed !== 1) fail('speed', `speed ${speed} is for a real clock, and the clock is manual (it moves only when advanced): leave the speed out, or use --clock real.`);
  return resolved as unknown as ResolvedOptions;
}
