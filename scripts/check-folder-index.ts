/**
 * Fails when a folder below the given root (default src) holds TypeScript but has no
 * index.ts: the rule `every-folder-has-an-index`, the part of the layout check that
 * dependency-cruiser cannot express (see scripts/folder-index.ts).
 *
 *   tsx scripts/check-folder-index.ts src     # in npm run lint:deps
 */
import { describeMissing, foldersWithoutIndex, RULE } from './folder-index.js';

const root = process.argv[2] ?? 'src';
const missing = foldersWithoutIndex(root);
if (missing.length > 0) {
  console.error(describeMissing(missing).join('\n'));
  console.error(`\nx ${missing.length} folder(s) of ${root}/ without an index.ts (${RULE}).`);
  process.exitCode = 1;
} else {
  console.log(`✔ every folder of ${root}/ has an index.ts (${RULE}).`);
}
