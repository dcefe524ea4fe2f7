/**
 * The folder-level dependency picture of a src/ tree, as an SVG: dependency-cruiser's own
 * drawing (its `archi` report, which collapses every module into its top-level folder of
 * src/, styled by reporterOptions.archi in .dependency-cruiser.cjs), laid out by Graphviz
 * compiled to WebAssembly (@hpcc-js/wasm-graphviz): no system graphviz, nothing downloaded.
 *
 * The same tree gives the same bytes: dependency-cruiser lists modules and dependencies in
 * sorted order, Graphviz lays out a given graph the same way every time, and the SVG names
 * no date or machine (only the Graphviz version, fixed by package-lock.json). So a test can
 * compare docs/architecture.svg with a fresh drawing to see that it is up to date.
 */
import { join, resolve } from 'node:path';
import { Graphviz } from '@hpcc-js/wasm-graphviz';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const REPO = resolve(import.meta.dirname, '..');

/** The picture's Graphviz source (the dot language) for the src/ tree under `root`. */
export async function folderGraphDot(root: string = REPO): Promise<string> {
  const options = await extractDepcruiseOptions(join(REPO, '.dependency-cruiser.cjs'));
  const tsConfig = extractTSConfig(join(REPO, options.tsConfig?.fileName ?? 'tsconfig.json'));
  const result = await cruise(
    ['src'],
    {
      ...options,
      // Paths as seen from `root` ("src/…"), whatever the working directory.
      baseDir: resolve(root),
      outputType: 'archi',
      // The project's own folders only: packages and Node builtins are left out of the picture.
      includeOnly: '^src/',
      // The nodes link to their folders, seen from docs/ where the picture lives.
      prefix: '../',
    },
    {},
    { tsConfig },
  );
  return String(result.output);
}

/** The picture as an SVG document. */
export async function folderGraphSvg(root: string = REPO): Promise<string> {
  const graphviz = await Graphviz.load();
  return graphviz.dot(await folderGraphDot(root), 'svg');
}
