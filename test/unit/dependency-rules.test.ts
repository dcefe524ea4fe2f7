import { join } from 'node:path';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';
import { folderGraphSvg } from '../../scripts/folder-graph.js';
import { RULE as AUGMENTATION_RULE } from '../../scripts/augmentations.js';
import { RULE as FOLDER_INDEX_RULE } from '../../scripts/folder-index.js';
import { RULE as STORAGE_PORT_RULE } from '../../scripts/storage-port.js';
import { describeOffences, layoutOffences } from '../../scripts/layout-offences.js';

// The layout rules of src/ (.dependency-cruiser.cjs, plus scripts/folder-index.ts for what
// dependency-cruiser cannot see), run as `npm run lint:deps` runs them, over the small trees
// of test/fixtures/layers/: one that keeps every rule, and one per rule that breaks it.

const ROOT = join(import.meta.dirname, '../..');
const FIXTURES = join(ROOT, 'test/fixtures/layers');

let options: Awaited<ReturnType<typeof extractDepcruiseOptions>>;
let tsConfig: ReturnType<typeof extractTSConfig>;

beforeAll(async () => {
  // What the depcruise command does with `--config .dependency-cruiser.cjs`: read the
  // configuration, then the tsconfig.json it names.
  options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
  tsConfig = extractTSConfig(join(ROOT, options.tsConfig?.fileName ?? 'tsconfig.json'));
});

/** An npm package's resolved path (…/node_modules/pg/esm/index.mjs) shown as its name. */
const shown = (path: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1] ?? path;

/** dependency-cruiser's findings on a fixture tree, with the project's configuration. */
async function cruiseTree(fixture: string): Promise<ICruiseResult> {
  // baseDir: paths are seen from the fixture as they are from the repository root ("src/…").
  const result = await cruise(['src'], { ...options, baseDir: join(FIXTURES, fixture) }, {}, { tsConfig });
  return result.output as ICruiseResult;
}

/**
 * The broken rules `npm run lint:deps` reports for a fixture tree, one line per offence:
 * "rule: from → to" (for a folder without index.ts, "rule: folder").
 */
async function lint(fixture: string): Promise<string[]> {
  const { offences } = await layoutOffences(join(FIXTURES, fixture));
  return [...new Set(offences.map(({ rule, from, to }) => (rule === FOLDER_INDEX_RULE ? `${rule}: ${from}` : `${rule}: ${from} → ${shown(to)}`)))].sort();
}

describe('npm run lint:deps', () => {
  it('holds every rule as an error, so that no rule is loosened to a warning that passes', () => {
    const rules = (options.ruleSet?.forbidden ?? []) as IForbiddenRuleType[];
    expect(rules.length).toBeGreaterThan(15);
    expect(rules.filter((rule) => rule.severity !== 'error').map((rule) => rule.name)).toEqual([]);
  });

  it('passes on a tree that keeps every rule, with every kind of import they allow', async () => {
    // Among them: cli.ts → index.ts, feature → feature, app → http, config → feature, a
    // type from config in src/index.ts, an adapter importing the port of its parent folder,
    // a nested folder's door, pg in store/postgres, express in http/ and app/, and a folder
    // of data only (store/postgres/migrations/, no TypeScript: no index.ts needed).
    expect(await lint('clean')).toEqual([]);
    // …and not because nothing was read: every file and import of the tree was seen.
    const { summary } = await cruiseTree('clean');
    expect([summary.totalCruised, summary.totalDependenciesCruised]).toEqual([32, 54]);
  });

  describe('the layers', () => {
    it('fails when a feature imports the HTTP layer', async () => {
      expect(await lint('feature-imports-http')).toEqual(['feature-does-not-import-http: src/orders/create.ts → src/http/index.ts']);
    });

    it('fails when a feature imports the composition layer', async () => {
      expect(await lint('feature-imports-config')).toEqual(['feature-does-not-import-composition-or-client: src/webhooks/index.ts → src/config/index.ts']);
    });

    it('fails when a record imports a feature', async () => {
      expect(await lint('record-imports-feature')).toEqual(['records-import-only-records: src/records/order.ts → src/orders/index.ts']);
    });

    it('fails when a storage file imports a feature', async () => {
      expect(await lint('store-imports-feature')).toEqual(['store-imports-only-store-shared-records: src/store/port.ts → src/orders/index.ts']);
    });

    it('fails when src/ imports a file outside it (a helper that launders a forbidden import, a build)', async () => {
      expect(await lint('import-outside-src')).toEqual([
        'src-imports-only-src-and-packages: src/store/index.ts → build/app.js',
        'src-imports-only-src-and-packages: src/store/index.ts → lib/launder.ts',
      ]);
    });

    it('fails when a shared utility imports storage', async () => {
      expect(await lint('shared-imports-store')).toEqual(['shared-imports-only-shared-and-records: src/shared/index.ts → src/store/index.ts']);
    });

    it('fails when the HTTP layer imports the composition layer', async () => {
      expect(await lint('http-imports-app')).toEqual(['http-does-not-import-composition-or-client: src/http/index.ts → src/app/index.ts']);
    });

    it('fails when config imports the HTTP layer', async () => {
      expect(await lint('config-imports-http')).toEqual(['config-does-not-import-http-or-app: src/config/index.ts → src/http/index.ts']);
    });

    it('fails when the composition layer imports the client', async () => {
      expect(await lint('composition-imports-client')).toEqual(['composition-does-not-import-client: src/app/index.ts → src/client/index.ts']);
    });

    it('fails when the client imports a feature', async () => {
      expect(await lint('client-imports-feature')).toEqual(['client-imports-only-records-and-shared: src/client/report.ts → src/orders/index.ts']);
    });

    it('fails when src/index.ts exports a value of a feature', async () => {
      expect(await lint('index-imports-feature')).toEqual(['index-takes-values-only-from-app: src/index.ts → src/orders/index.ts']);
    });

    it('fails when src/index.ts takes a value, not a type, from config', async () => {
      expect(await lint('index-takes-value-from-config')).toEqual(['index-takes-values-only-from-app: src/index.ts → src/config/index.ts']);
    });

    it('fails when a file imports a file at the top of src/', async () => {
      expect(await lint('top-level-file-imported')).toEqual(['entry-points-not-imported: src/report/index.ts → src/version.ts']);
    });
  });

  describe('circles', () => {
    it('fails when files import each other in a circle, type-only imports included', async () => {
      expect(await lint('file-circle')).toEqual(['no-circular-files: src/orders/create.ts → src/orders/validate.ts']);
    });

    it('fails when folders import each other in a circle, though no files do', async () => {
      expect(await lint('folder-circle')).toEqual([
        'no-circular-folders: src/orders → src/tracking',
        'no-circular-folders: src/tracking → src/orders',
      ]);
    });

    it('fails when two subfolders of a folder import each other in a circle', async () => {
      expect(await lint('nested-folder-circle')).toEqual([
        'no-circular-folders: src/store/embedded → src/store/postgres',
        'no-circular-folders: src/store/postgres → src/store/embedded',
      ]);
    });
  });

  describe('one door per folder', () => {
    it("fails when an import reaches past a top-level folder's index.ts", async () => {
      expect(await lint('past-door-top')).toEqual(['one-door-per-folder: src/orders/create.ts → src/tracking/journey.ts']);
    });

    it("fails when an import reaches past a nested folder's index.ts, from its parent or grandparent folder", async () => {
      expect(await lint('past-door-nested')).toEqual([
        'one-door-per-folder: src/store/embedded/storage.ts → src/store/embedded/file/journal.ts',
        'one-door-per-folder: src/store/open.ts → src/store/embedded/storage.ts',
      ]);
    });

    it("fails when an import takes a nested folder's index.ts from outside its parent, and names the door to take", async () => {
      // src/orders/rules/index.ts is a door, but for the files of src/orders/ only: from
      // src/http/ the way in is src/orders/index.ts, and the report says so for this import.
      expect(await lint('past-nested-door')).toEqual(['one-door-per-folder: src/http/handlers/orders.ts → src/orders/rules/index.ts']);
      const { offences, reasons } = await layoutOffences(join(FIXTURES, 'past-nested-door'));
      expect(describeOffences(offences, reasons)).toEqual([
        `error one-door-per-folder: ${reasons.get('one-door-per-folder')}`,
        '  src/http/handlers/orders.ts → src/orders/rules/index.ts: src/http/handlers/orders.ts is outside src/orders/, whose door is src/orders/index.ts: import that instead',
        '',
      ]);
      // The rule's reason tells the same case of the store, not only the one of a file inside it.
      expect(reasons.get('one-door-per-folder')).toContain('src/http/handlers/orders.ts imports src/store/index.ts, neither src/store/embedded/index.ts');
    });

    it('fails when a file too deep for the door check imports a file of src/', async () => {
      expect(await lint('too-deep')).toEqual(['within-door-depth: src/a/b/c/d/e/f/g/deep.ts → src/a/b/c/d/e/f/index.ts']);
    });

    it('fails when a folder has no index.ts', async () => {
      expect(await lint('folder-without-index')).toEqual([`${FOLDER_INDEX_RULE}: src/tracking`]);
    });

    it("fails when a file augments another module's types or the global scope, which no import shows", async () => {
      expect(await lint('module-augmentation')).toEqual([
        `${AUGMENTATION_RULE}: src/http/express-request.d.ts → global`,
        `${AUGMENTATION_RULE}: src/orders/create.ts → ../http/index.js`,
        `${AUGMENTATION_RULE}: src/orders/create.ts → global`,
      ]);
      const { offences, reasons } = await layoutOffences(join(FIXTURES, 'module-augmentation'));
      expect(describeOffences(offences, reasons)).toEqual([
        `error ${AUGMENTATION_RULE}: ${reasons.get(AUGMENTATION_RULE)}`,
        '  src/http/express-request.d.ts augments global',
        "  src/orders/create.ts augments ../http/index.js",
        '  src/orders/create.ts augments global',
        '',
      ]);
      expect(reasons.get(AUGMENTATION_RULE)).toMatch(/^No file of src\/ augments a module/);
      expect(reasons.get(AUGMENTATION_RULE)).toContain('a file without import or export');
    });
  });

  describe('storage through the port', () => {
    it("fails when a file outside store/ and app/ takes an adapter's class, even re-exported by store/'s door", async () => {
      // src/store/index.ts re-exports EmbeddedStorage: every import lands on a door, so no
      // file rule objects; the names show the handler (and a feature reading it off a
      // namespace import) using the adapter. src/app/, the composition root, may.
      // Renamed on its way in (aliases.ts) or written as a type query (held.ts), it is the adapter's all the same.
      expect(await lint('adapter-through-door')).toEqual([
        `${STORAGE_PORT_RULE}: src/http/handlers/orders.ts → src/store/embedded/storage.ts`,
        `${STORAGE_PORT_RULE}: src/orders/aliases.ts → src/store/embedded/storage.ts`,
        `${STORAGE_PORT_RULE}: src/orders/held.ts → src/store/embedded/storage.ts`,
        `${STORAGE_PORT_RULE}: src/orders/index.ts → src/store/embedded/storage.ts`,
      ]);
      const { offences, reasons } = await layoutOffences(join(FIXTURES, 'adapter-through-door'));
      const told = (file: string) =>
        `  ${file} takes EmbeddedStorage, which the adapter declares in src/store/embedded/storage.ts: use the Storage port from src/store/index.ts instead (a door that hands the name on does not make it the port's)`;
      expect(describeOffences(offences, reasons)).toEqual([
        `error ${STORAGE_PORT_RULE}: ${reasons.get(STORAGE_PORT_RULE)}`,
        ...['src/http/handlers/orders.ts', 'src/orders/aliases.ts', 'src/orders/held.ts', 'src/orders/index.ts'].map(told),
        '',
      ]);
    });
  });

  describe('packages', () => {
    it('fails when pg is imported outside src/store/postgres', async () => {
      expect(await lint('pg-outside-postgres')).toEqual(['pg-only-in-postgres-adapter: src/store/embedded/index.ts → pg']);
    });

    it('fails when express is imported outside src/http and src/app, even for a type', async () => {
      expect(await lint('express-outside-edge')).toEqual(['express-only-in-http-and-app: src/orders/index.ts → express']);
    });
  });

  it('fails when an import does not resolve (it would be invisible to every rule)', async () => {
    expect(await lint('unresolvable-import')).toEqual(['no-unresolvable-import: src/orders/index.ts → ./tracking.js']);
  });

  it('names every rule and says it in words (docs/architecture.md cites them)', () => {
    const rules = (options.ruleSet?.forbidden ?? []) as IForbiddenRuleType[];
    for (const rule of rules) {
      expect(rule.name, JSON.stringify(rule.from)).toMatch(/^[a-z]+(?:-[a-z]+)+$/);
      expect(rule.comment?.length ?? 0, rule.name).toBeGreaterThan(20);
    }
    expect(new Set(rules.map((rule) => rule.name)).size).toBe(rules.length);
  });
});

describe('npm run docs:graph', () => {
  /** The picture's nodes and edges by their titles ("src/app", "src/app->src/http"). */
  const titles = (svg: string) => [...svg.matchAll(/<title>(src\/[^<]*)<\/title>/g)].map((match) => match[1]!.replaceAll('&#45;', '-').replaceAll('&gt;', '>'));

  it('tells each broken rule with its reason, and the circles after the imports that close them, one line each', async () => {
    const { offences, reasons } = await layoutOffences(join(FIXTURES, 'feature-imports-http'));
    const folderCircle = await layoutOffences(join(FIXTURES, 'folder-circle'));
    const lines = describeOffences([...offences, ...folderCircle.offences], reasons);
    expect(lines.slice(0, 2)).toEqual([
      `error feature-does-not-import-http: ${reasons.get('feature-does-not-import-http')}`,
      '  src/orders/create.ts → src/http/index.ts',
    ]);
    expect(reasons.get('feature-does-not-import-http')).toMatch(/features speak plain data/);
    expect(lines).toContain('2 circle(s) of imports, most of them through the import(s) above: fix those first, and these go with them.');
    expect(lines).toContain('  no-circular-folders: src/orders → src/tracking → src/orders');
    expect(describeOffences(folderCircle.offences, reasons)[0]).toMatch(/^2 circle\(s\) of imports: No circle of imports between folders/);
  });

  it('draws one node per top-level folder (and file) of src/ and their imports, the same bytes for the same tree', async () => {
    const svg = await folderGraphSvg(join(FIXTURES, 'clean'));
    expect(await folderGraphSvg(join(FIXTURES, 'clean'))).toBe(svg);
    const drawn = titles(svg);
    expect(drawn.filter((title) => !title.includes('->')).sort()).toEqual(
      ['app', 'cli.ts', 'client', 'config', 'http', 'index.ts', 'orders', 'records', 'shared', 'store', 'tracking', 'webhooks'].map((name) => `src/${name}`),
    );
    expect(drawn).toContain('src/http->src/orders');
    expect(drawn).toContain('src/store->src/records');
    expect(svg).not.toContain('stroke="red"');
  });

  it('draws an import that breaks a rule in red, with the rule\'s name', async () => {
    const svg = (await folderGraphSvg(join(FIXTURES, 'feature-imports-http'))).replaceAll('&#45;', '-');
    expect(titles(svg)).toEqual(['src/http', 'src/orders', 'src/orders->src/http']);
    expect(svg).toContain('stroke="red"');
    expect(svg).toContain('fill="red">feature-does-not-import-http</text>');
  });
});
