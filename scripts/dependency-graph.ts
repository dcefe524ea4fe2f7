/**
 * Draws the folder-level dependency picture of src/ (see scripts/folder-graph.ts) into
 * docs/architecture.svg, which docs/architecture.md shows.
 *
 *   npm run docs:graph                     # after a change of src/'s folders or their imports
 *   npm run docs:graph -- --check          # fails when docs/architecture.svg is not up to date
 *   npm run docs:graph -- --root test/fixtures/layers/clean --out /tmp/clean.svg
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { folderGraphSvg } from './folder-graph.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: '.' },
    out: { type: 'string', default: 'docs/architecture.svg' },
    check: { type: 'boolean', default: false },
  },
});
const out = values.out;
const svg = await folderGraphSvg(values.root);
if (values.check) {
  if (!existsSync(out) || readFileSync(out, 'utf8') !== svg) {
    console.error(`${out} is not the picture of ${values.root}/src: run npm run docs:graph.`);
    process.exitCode = 1;
  } else {
    console.log(`${out} is up to date.`);
  }
} else {
  writeFileSync(out, svg);
  console.log(`Wrote ${out} (${svg.length} bytes).`);
}
