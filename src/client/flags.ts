import { InvalidArgumentError } from 'commander';

/**
 * A flag's value that may not be empty: `--token "$TOKEN"` or `--order "$ORDER"` with the
 * variable unset is a mistake to name, not a request to send (without an order a trigger
 * makes a new one; without a token the sandbox answers 401).
 */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  return value;
}
