/**
 * The layout rules of src/ (.dependency-cruiser.cjs, and what dependency-cruiser cannot
 * see: the folders' doors of scripts/folder-index.ts, the augmentations of
 * scripts/augmentations.ts and the adapters' names of scripts/storage-port.ts), and how
 * `npm run lint:deps` tells of a broken one (scripts/lint-deps.ts).
 */
import { join, resolve } from 'node:path';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { augmentationsIn, REASON as AUGMENTATION_REASON, RULE as AUGMENTATION_RULE } from './augmentations.js';
import { foldersWithoutIndex, RULE as FOLDER_INDEX_RULE } from './folder-index.js';
import { adapterUsesIn, REASON as STORAGE_PORT_REASON, RULE as STORAGE_PORT_RULE } from './storage-port.js';

const REPO = resolve(import.meta.dirname, '..');

/** One broken rule: `from → to`, or for a circle every step of it. */
export interface Offence {
  rule: string;
  from: string;
  to: string;
  /** A circle's modules or folders, from `from` back to it. */
  cycle?: string[];
  /** The name `from` takes from `to` (storage-through-the-port). */
  name?: string;
}

/** What the rules find in the src/ tree under `root`: the offences, the rules' reasons by name, and how much was read. */
export async function layoutOffences(root: string = REPO): Promise<{ offences: Offence[]; reasons: Map<string, string>; cruised: { modules: number; dependencies: number } }> {
  const options = await extractDepcruiseOptions(join(REPO, '.dependency-cruiser.cjs'));
  const tsConfig = extractTSConfig(join(REPO, options.tsConfig?.fileName ?? 'tsconfig.json'));
  // baseDir: paths as seen from `root` ("src/…"), whatever the working directory.
  const { summary } = (await cruise(['src'], { ...options, baseDir: resolve(root) }, {}, { tsConfig })).output as ICruiseResult;
  const reasons = new Map(((options.ruleSet?.forbidden ?? []) as IForbiddenRuleType[]).map((rule) => [rule.name ?? '', (rule.comment ?? '').replace(/\s+/g, ' ').trim()]));
  reasons.set(FOLDER_INDEX_RULE, 'Every folder of src/ has an index.ts, its one door: other folders import it, not the files behind it.');
  const offences: Offence[] = summary.violations
    // Only errors fail the command (every rule is one: test/unit/dependency-rules.test.ts).
    .filter(({ rule }) => rule.severity === 'error')
    .map(({ rule, from, to, cycle }) => ({ rule: rule.name, from, to, ...(cycle ? { cycle: cycle.map((step) => step.name) } : {}) }));
  reasons.set(AUGMENTATION_RULE, AUGMENTATION_REASON);
  const shown = (path: string) => (path.startsWith(resolve(root)) ? path.slice(resolve(root).length + 1) : path);
  for (const folder of foldersWithoutIndex(join(root, 'src'))) offences.push({ rule: FOLDER_INDEX_RULE, from: shown(folder), to: join(shown(folder), 'index.ts') });
  for (const { file, augments } of augmentationsIn(join(root, 'src'))) offences.push({ rule: AUGMENTATION_RULE, from: shown(file), to: augments });
  reasons.set(STORAGE_PORT_RULE, STORAGE_PORT_REASON);
  for (const { file, name, declaredIn } of adapterUsesIn(root, tsConfig.options)) offences.push({ rule: STORAGE_PORT_RULE, from: file, to: declaredIn, name });
  return { offences, reasons, cruised: { modules: summary.totalCruised, dependencies: summary.totalDependenciesCruised ?? 0 } };
}

/** The report's lines: the direct offences with their reasons, then the circles one line each. */
export function describeOffences(offences: readonly Offence[], reasons: ReadonlyMap<string, string>): string[] {
  const direct = offences.filter((o) => !o.cycle);
  const circles = offences.filter((o) => o.cycle);
  const lines: string[] = [];
  for (const rule of new Set(direct.map((o) => o.rule))) {
    lines.push(`error ${rule}: ${reasons.get(rule) ?? ''}`);
    for (const o of direct.filter((d) => d.rule === rule)) lines.push(`  ${offenceLine(o)}`);
    lines.push('');
  }
  if (circles.length > 0) {
    lines.push(
      direct.length > 0
        ? `${circles.length} circle(s) of imports, most of them through the import(s) above: fix those first, and these go with them.`
        : `${circles.length} circle(s) of imports: ${reasons.get(circles[0]!.rule) ?? ''}`,
    );
    for (const o of circles) lines.push(`  ${o.rule}: ${[o.from, ...o.cycle!].join(' → ')}`);
    lines.push('');
  }
  return lines;
}

/** One offence in words: what the file did, and for a door passed, the door to take. */
function offenceLine(o: Offence): string {
  if (o.rule === FOLDER_INDEX_RULE) return `${o.to} is missing`;
  if (o.rule === AUGMENTATION_RULE) return `${o.from} augments ${o.to}`;
  if (o.rule === STORAGE_PORT_RULE) return `${o.from} takes ${o.name}, which the adapter declares in ${o.to}: use the Storage port from src/store/index.ts instead (a door that hands the name on does not make it the port's)`;
  if (o.rule === 'one-door-per-folder') {
    const door = doorFor(o.from, o.to);
    if (door) return `${o.from} → ${o.to}: ${o.from} is outside ${door.folder}/, whose door is ${door.index}: import that instead`;
  }
  return `${o.from} → ${o.to}`;
}

/**
 * The door an import past one should have taken: the index.ts of the outermost folder
 * of the target that the importing file is not in ("src/store" for
 * src/http/handlers/orders.ts → src/store/embedded/index.ts).
 */
function doorFor(from: string, to: string): { folder: string; index: string } | undefined {
  const fromFolders = from.split('/').slice(0, -1);
  const toFolders = to.split('/').slice(0, -1);
  let common = 0;
  while (common < fromFolders.length && common < toFolders.length && fromFolders[common] === toFolders[common]) common += 1;
  if (common >= toFolders.length) return undefined;
  const folder = toFolders.slice(0, common + 1).join('/');
  return { folder, index: `${folder}/index.ts` };
}
