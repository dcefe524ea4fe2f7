import { InvalidArgumentError } from 'commander';

/**
 * A flag's value that may not be empty: `--token "$TOKEN"` or `--order "$ORDER"` with the
 * variable unset is a mistake to name, not a request to send (an empty `--order` fired on
 * a new order; an empty `--token` came back a 401).
 */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  return value;
}
