import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../fixtures/index.js';

/** One provider behaviour a client should meet (fixtures/readiness/catalogue.json). */
export interface CatalogueItem {
  id: string;
  title: string;
  /** False when the sandbox cannot observe it: listed, never counted in the handled share. */
  graded: boolean;
  /** True when it rests on the sandbox's own choice (signing, retries, faults) where the provider is silent. */
  sandbox_choice: boolean;
  /** The passage of the provider interface it comes from. */
  source: string;
  exercised: string;
  handled: string;
}

let loaded: CatalogueItem[] | undefined;

/** The catalogue, read once. */
export function catalogue(): CatalogueItem[] {
  loaded ??= (JSON.parse(readFileSync(join(FIXTURES_DIR, 'readiness', 'catalogue.json'), 'utf8')) as { items: CatalogueItem[] }).items;
  return loaded;
}
