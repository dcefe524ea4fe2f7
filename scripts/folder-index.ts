/**
 * The rule `every-folder-has-an-index`: every folder below src/ that holds TypeScript has
 * an index.ts, its public surface (the door that `one-door-per-folder` in
 * .dependency-cruiser.cjs makes every other folder go through).
 *
 * dependency-cruiser cannot check this itself: its rules are about the files and imports
 * it finds, and a missing file is neither. So this small walk of the tree does it, and
 * `npm run lint:deps` runs it after dependency-cruiser.
 *
 * A folder that holds no TypeScript at any depth (data files read at run time) is not a
 * module folder: nothing imports it as code, so it needs no door.
 */
import { readdirSync } from 'node:fs';

export const RULE = 'every-folder-has-an-index';

/**
 * The folders below `root` (e.g. "src") that hold TypeScript but no index.ts, as paths
 * joined onto `root` with "/", sorted. `root` itself is not checked: src/index.ts is the
 * package's entry point, not a door.
 */
export function foldersWithoutIndex(root: string): string[] {
  const missing: string[] = [];
  /** Walks one folder; returns whether it holds TypeScript at any depth. */
  const walk = (folder: string, isRoot: boolean): boolean => {
    const entries = readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let holdsTypeScript = entries.some((entry) => entry.isFile() && entry.name.endsWith('.ts'));
    for (const entry of entries) {
      if (entry.isDirectory() && walk(`${folder}/${entry.name}`, false)) holdsTypeScript = true;
    }
    if (!isRoot && holdsTypeScript && !entries.some((entry) => entry.isFile() && entry.name === 'index.ts')) missing.push(folder);
    return holdsTypeScript;
  };
  walk(root.replaceAll('\\', '/').replace(/\/+$/, ''), true);
  return missing.sort();
}
