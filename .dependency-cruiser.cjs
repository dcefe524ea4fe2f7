// @ts-check
/**
 * The layout of src/, written as rules that dependency-cruiser checks on every import
 * (`npm run lint:deps`). docs/architecture.md cites the rules by name.
 *
 * The layers, from top to bottom. A layer may import the layers below it, never one above:
 *
 *   process      src/cli.ts, src/index.ts     the package's entry points
 *   client       src/client/                  CLI commands that talk HTTP to a running sandbox
 *   composition  src/app/, src/config/        builds the services and the express app; options
 *   edge         src/http/                    express, the request pipeline, routes, handlers
 *   features     every other top-level folder orders, tracking, webhooks, faults, ...
 *   storage      src/store/                   the storage port and its adapters
 *   shared       src/shared/                  errors and small utilities
 *   records      src/records/                 the record types: the floor of the house
 *
 * Paths are matched relative to the directory dependency-cruiser runs in (the repository
 * root), so every module of the project starts with `src/`. An npm package resolves to a
 * path under node_modules/, a Node builtin to its own name: the layer rules below only
 * look at targets under `src/`, so packages and builtins are free unless a rule names them.
 *
 * Three rules are not dependency-cruiser's to check: that every folder has an index.ts
 * (dependency-cruiser sees the files that exist, never one that is missing), that no
 * file augments a module (`declare module '…'`, which is no import it follows), and that
 * only src/store/ and src/app/ use what a storage adapter declares (it follows files, not
 * the names a door re-exports). scripts/folder-index.ts, scripts/augmentations.ts and
 * scripts/storage-port.ts check them under the rule names `every-folder-has-an-index`,
 * `no-module-augmentation` and `storage-through-the-port`, in
 * the same `npm run lint:deps` (scripts/lint-deps.ts), which prints each broken rule with
 * its `comment`: write that comment for whoever broke the rule.
 */

/** The top-level folders that are a layer of their own; every other one is a feature. */
const NAMED = ['client', 'app', 'config', 'http', 'store', 'shared', 'records'];
/** A file inside a feature folder: a top-level folder of src/ that no layer names. */
const FEATURE = `^src/(?!(?:${NAMED.join('|')})/)[^/]+/`;
/** Any module of the project (as opposed to npm packages and Node builtins). */
const SRC = '^src/';

/**
 * How many folders deep below src/ the one-door rule follows a file. A regular expression
 * cannot split a path into all of its ancestor folders, so the rule captures them one by
 * one, up to this depth; a file deeper than this may import nothing of src/ (the rule
 * within-door-depth), so that none escapes it.
 */
const DOOR_DEPTH = 6;

/**
 * The one-door rule: a file outside folder D may import a file inside D only through
 * D/index.ts. Equivalently, seen from the importing file: it may import
 *   - a file directly in one of its own ancestor folders (its own folder, its parent, ... up
 *     to src/), since it is inside all of those, and
 *   - the index.ts of a direct subfolder of one of those ancestors (the door of a folder it
 *     is outside of);
 * anything else reaches past a door.
 *
 * `from.path` captures the importing file's folders below src/ as $1, $2, ... (dependency-
 * cruiser's group matching); `to.pathNot` lists the allowed targets built from those
 * groups, one alternative per ancestor. A group that did not match (a shallower file) is
 * left as the text "$n" in the pattern, where "$" is an end anchor: that alternative can
 * never match, which is what a missing ancestor should do.
 */
function oneDoorPerFolder() {
  // `(?:([^/]+)/|)` rather than `(?:([^/]+)/)?`: the same match, but dependency-cruiser
  // refuses a repetition inside a repetition (a possibly slow regular expression).
  const folders = Array.from({ length: DOOR_DEPTH }, () => '(?:([^/]+)/|)').join('');
  const ancestors = ['src'];
  for (let depth = 1; depth <= DOOR_DEPTH; depth += 1) {
    ancestors.push(`${ancestors[depth - 1]}/$${depth}`);
  }
  return {
    name: 'one-door-per-folder',
    comment:
      'A file outside a folder imports a file inside it only through the folder\'s index.ts (its door), at any depth, and a nested ' +
      'folder\'s door is for the files of its parent folder: src/http/handlers/orders.ts imports src/store/index.ts, neither ' +
      'src/store/embedded/index.ts nor src/store/port.ts; src/store/open.ts, inside src/store/, imports src/store/embedded/index.ts, ' +
      'not src/store/embedded/storage.ts. Inside a folder imports are free, and a file may import a file of any of its ancestor folders directly.',
    severity: 'error',
    from: { path: `^src/${folders}[^/]+$` },
    to: {
      path: SRC,
      pathNot: `^(?:${ancestors.join('|')})/(?:[^/]+|[^/]+/index\\.ts)$`,
    },
  };
}

/**
 * The other half of the one-door rule: a file deeper than DOOR_DEPTH folders below src/
 * would escape it, so such a file may import nothing of src/.
 */
function withinDoorDepth() {
  return {
    name: 'within-door-depth',
    comment:
      `No file more than ${DOOR_DEPTH} folders below src/ imports a file of src/: one-door-per-folder follows a file's ` +
      `folders only that deep. Flatten the tree (or raise DOOR_DEPTH in .dependency-cruiser.cjs).`,
    severity: 'error',
    from: { path: `^src/${'[^/]+/'.repeat(DOOR_DEPTH + 1)}` },
    to: { path: SRC },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // ---- cycles ----------------------------------------------------------------------
    {
      name: 'no-circular-files',
      comment:
        'No circle of imports between files, type-only imports included: a circle means neither file can be understood, ' +
        'loaded or tested without the other.',
      severity: 'error',
      from: { path: SRC },
      to: { circular: true },
    },
    {
      // A folder-scoped rule: dependency-cruiser sums the imports of every file in a
      // folder (subfolders included) into one node per folder and finds the circles
      // between those nodes. A folder's imports of its own subfolders (and theirs of it)
      // stay inside it, so a parent and its child never form a circle; siblings at any
      // depth do. Together with one-door-per-folder (every import across folders lands on
      // the index.ts of the folder it enters) this catches every circle between folders.
      name: 'no-circular-folders',
      scope: 'folder',
      comment:
        'No circle of imports between folders (e.g. orders -> tracking -> orders, or store/embedded -> store/postgres -> store/embedded): ' +
        'folders form a hierarchy that can be read from the bottom up.',
      severity: 'error',
      from: { path: SRC },
      to: { circular: true },
    },

    // ---- the layers, from the top down ---------------------------------------------
    {
      name: 'entry-points-not-imported',
      comment:
        'No file of src/ imports src/cli.ts or src/index.ts (the package\'s entry points, the top layer), ' +
        'nor any other file at the top of src/, where only the entry points belong. ' +
        'src/cli.ts, which may import anything, is the exception: it may use src/index.ts.',
      severity: 'error',
      from: { path: SRC, pathNot: '^src/cli\\.ts$' },
      to: { path: '^src/[^/]+$' },
    },
    {
      name: 'index-takes-values-only-from-app',
      comment: 'src/index.ts (the package entry) takes values only from src/app/ (createSandbox, createApp); it may export the public types of any folder.',
      severity: 'error',
      from: { path: '^src/index\\.ts$' },
      to: { path: SRC, pathNot: '^src/app/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'client-imports-only-records-and-shared',
      comment:
        'src/client/ (CLI commands talking HTTP to a running sandbox, the Testcontainers module) imports only src/records/ and src/shared/ ' +
        'of the project (plus npm packages and Node builtins): it must run without the server\'s code.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: SRC, pathNot: '^src/(?:client|records|shared)/' },
    },
    {
      name: 'composition-does-not-import-client',
      comment: 'src/app/ and src/config/ (the composition layer) do not import src/client/, which sits above them.',
      severity: 'error',
      from: { path: '^src/(?:app|config)/' },
      to: { path: '^src/client/' },
    },
    {
      name: 'config-does-not-import-http-or-app',
      comment:
        'src/config/ (the options table, CLI program, config file) imports features, store, shared and records, ' +
        'never src/http/ nor src/app/: options are read before anything is built.',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/(?:http|app)/' },
    },
    {
      name: 'http-does-not-import-composition-or-client',
      comment:
        'src/http/ (the edge: express, pipeline stages, route table, handlers) imports features, store, shared and records, ' +
        'never src/app/, src/config/ or src/client/: it is handed what it serves.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(?:app|config|client)/' },
    },
    {
      name: 'feature-does-not-import-http',
      comment:
        'No file of a feature folder (orders, tracking, webhooks, ...) imports src/http/: features speak plain data, ' +
        'the edge turns HTTP into calls on them.',
      severity: 'error',
      from: { path: FEATURE },
      to: { path: '^src/http/' },
    },
    {
      name: 'feature-does-not-import-composition-or-client',
      comment:
        'No file of a feature folder imports src/app/, src/config/ or src/client/: features are built by the composition layer, ' +
        'they do not build themselves nor read options.',
      severity: 'error',
      from: { path: FEATURE },
      to: { path: '^src/(?:app|config|client)/' },
    },
    {
      name: 'store-imports-only-store-shared-records',
      comment:
        'src/store/ (the storage port and its adapters) imports only src/store/, src/shared/ and src/records/: ' +
        'storage speaks records, it knows no feature.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: SRC, pathNot: '^src/(?:store|shared|records)/' },
    },
    {
      name: 'shared-imports-only-shared-and-records',
      comment: 'src/shared/ (errors, small utilities) imports only src/shared/ and src/records/.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: SRC, pathNot: '^src/(?:shared|records)/' },
    },
    {
      name: 'records-import-only-records',
      comment: 'src/records/ (the record types, the floor) imports nothing of src/ outside src/records/.',
      severity: 'error',
      from: { path: '^src/records/' },
      to: { path: SRC, pathNot: '^src/records/' },
    },

    // ---- doors ------------------------------------------------------------------------
    oneDoorPerFolder(),
    withinDoorDepth(),

    // ---- npm packages that belong to one layer ------------------------------------------
    {
      name: 'pg-only-in-postgres-adapter',
      comment: 'Only src/store/postgres/ imports the pg package (PostgreSQL\'s client), types included.',
      severity: 'error',
      from: { path: SRC, pathNot: '^src/store/postgres/' },
      to: { path: '(?:^|/)node_modules/(?:@types/)?pg/' },
    },
    {
      name: 'express-only-in-http-and-app',
      comment: 'Only src/http/ and src/app/ import express, types included: the rest of the code knows no web framework.',
      severity: 'error',
      from: { path: SRC, pathNot: '^src/(?:http|app)/' },
      to: { path: '(?:^|/)node_modules/(?:@types/)?express/' },
    },

    // ---- the check itself -----------------------------------------------------------------
    {
      name: 'src-imports-only-src-and-packages',
      comment:
        'A file of src/ imports only files of src/, npm packages and Node builtins: an import of a file outside src/ (a build in dist/, ' +
        'a helper folder) would carry a dependency past every other rule.',
      severity: 'error',
      from: { path: SRC },
      to: { pathNot: ['^src/', '(?:^|/)node_modules/'], dependencyTypesNot: ['core'], couldNotResolve: false },
    },
    {
      name: 'no-unresolvable-import',
      comment:
        'Every import resolves to a file, package or builtin: an import dependency-cruiser cannot resolve is invisible to every other rule.',
      severity: 'error',
      from: { path: SRC },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Only src/ is cruised (the command names it); tests are not.
    exclude: { path: '^(?:node_modules|test)/' },
    // Imports of npm packages and of anything outside src/ (dist/, say) are recorded, so
    // the rules see them, but their own imports are not followed.
    doNotFollow: { path: ['node_modules', '^dist/', '^(?!src/)'] },
    // Read the TypeScript sources before compilation, so that `import type` and
    // type-only re-exports count as imports (the compiled JavaScript drops them).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve packages the way Node does for an ESM project (package.json "exports").
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      // The folder picture of src/ (npm run docs:graph, scripts/dependency-graph.ts): one
      // node per top-level folder (and per file at the top), importers above what they
      // import (graphviz ranks them so; a layer is not a row of its own), each layer in its
      // own colour. Edges that break a rule are drawn in red with the rule's name;
      // a hollow head says one of the imports an arrow stands for is type-only.
      archi: {
        collapsePattern: '^src/[^/]+',
        theme: {
          graph: { rankdir: 'TB', ranksep: '0.4', nodesep: '0.3', fontsize: '11' },
          node: { fontsize: '11', margin: '0.2,0.06' },
          modules: [
            { criteria: { source: '^src/[^/]+\\.ts$' }, attributes: { fillcolor: '#f2f2f2' } },
            { criteria: { source: '^src/client$' }, attributes: { fillcolor: '#ffe4c4' } },
            { criteria: { source: '^src/(?:app|config)$' }, attributes: { fillcolor: '#e6dcff' } },
            { criteria: { source: '^src/http$' }, attributes: { fillcolor: '#ffd9d9' } },
            { criteria: { source: '^src/store$' }, attributes: { fillcolor: '#d9ecff' } },
            { criteria: { source: '^src/shared$' }, attributes: { fillcolor: '#e8e8e8' } },
            { criteria: { source: '^src/records$' }, attributes: { fillcolor: '#d9f5d0' } },
            // Everything else at the top of src/ is a feature folder.
            { criteria: { source: '^src/' }, attributes: { fillcolor: '#ffffcc' } },
          ],
        },
      },
    },
  },
};
