/**
 * The rule `no-module-augmentation`: no file of src/ augments a module or the global scope
 * (`declare module '../http/index.js' { … }`, `declare global { … }`, or a script file's
 * declarations, which are global: `declare namespace Express { … }` in a file without
 * import or export). An augmentation changes the types of the module it names without
 * importing it, so dependency-cruiser sees no import and the layer rules nothing to judge:
 * a feature could add fields to the edge's request type unseen. A type a layer needs is written in that layer, or exported
 * through the door of the folder that owns it.
 *
 * TypeScript's own parser finds them, so a comment or a string that spells one is not one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';

export const RULE = 'no-module-augmentation';

export const REASON =
  "No file of src/ augments a module or the global scope (declare module '…', declare global, or declarations in a file without import or export, which are global): an augmentation changes another module's types without an import, where no layer rule can see it. Write the type in the layer that needs it, or export it through its folder's index.ts.";

/** One augmentation: the file (joined onto `root` with "/") and what it augments (a module's name, or "global"). */
export interface Augmentation {
  file: string;
  augments: string;
}

/** The augmentations in the TypeScript files below `root` (e.g. "src"), in path order. */
export function augmentationsIn(root: string): Augmentation[] {
  const found: Augmentation[] = [];
  const walk = (folder: string): void => {
    const entries = readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && /\.[mc]?ts$/.test(entry.name)) found.push(...augmentationsOf(path));
    }
  };
  walk(root.replaceAll('\\', '/').replace(/\/+$/, ''));
  return found;
}

function augmentationsOf(file: string): Augmentation[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: Augmentation[] = [];
  // A file with no import or export is a script: its declarations are global ones
  // (`declare namespace Express { … }` changes express's Request everywhere).
  if (!ts.isExternalModule(source)) {
    if (source.statements.some((s) => ts.isModuleDeclaration(s) || ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s) || ts.isVariableStatement(s) || ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s))) found.push({ file, augments: 'global' });
    return found;
  }
  const visit = (node: ts.Node): void => {
    if (ts.isModuleDeclaration(node)) {
      if (ts.isStringLiteral(node.name)) found.push({ file, augments: node.name.text });
      else if (node.name.text === 'global' && (node.flags & ts.NodeFlags.GlobalAugmentation) !== 0) found.push({ file, augments: 'global' });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
