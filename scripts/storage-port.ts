/**
 * The rule `storage-through-the-port`: only src/store/ itself and the composition root
 * (src/app/, which opens the store and hands it on) use what the adapters declare
 * (src/store/embedded/, src/store/postgres/); every other file speaks to the `Storage`
 * port (src/store/port.ts, through src/store/index.ts), so the domain never knows which
 * adapter it runs on.
 *
 * dependency-cruiser cannot check this itself: it follows files, not names, and every
 * importer of src/store/index.ts reaches the adapters' files through store/open.ts. A
 * door that re-exports an adapter's class (`export { EmbeddedStorage } from
 * './embedded/index.js'` in src/store/index.ts) would let a handler take it past every
 * file rule. So TypeScript's checker follows each name a file uses to where it is
 * declared, through any chain of re-exports.
 */
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

export const RULE = 'storage-through-the-port';

export const REASON =
  'Only src/store/ and the composition root (src/app/, which opens the store) use what the adapters declare (src/store/embedded/, src/store/postgres/), ' +
  'whether imported from the adapter or re-exported by a door: every other file takes the Storage port (and the records) from src/store/index.ts, ' +
  'so the domain never knows which adapter it runs on.';

/** The files that may use an adapter's names, and the adapters' own files: paths below the tree's root. */
const ALLOWED = /^src\/(?:store|app)\//;
const ADAPTER = /^src\/store\/(?:embedded|postgres)\//;

/** One use: the file, the name it uses and the adapter's file that declares it (paths below `root`). */
export interface AdapterUse {
  file: string;
  name: string;
  declaredIn: string;
}

/**
 * The names declared by an adapter that files of `root`/src outside src/store/ and
 * src/app/ use, one per file and name, in path order. `compilerOptions` are the project's
 * (tsconfig.json's), so modules resolve as they do for the build.
 */
export function adapterUsesIn(root: string, compilerOptions: ts.CompilerOptions): AdapterUse[] {
  const base = resolve(root);
  const shown = (path: string) => relative(base, path).replaceAll('\\', '/');
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && /\.[mc]?ts$/.test(entry.name)) files.push(path);
    }
  };
  walk(join(base, 'src'));
  // Only the tree's own files are read: a package's declarations (and the standard
  // library's) declare no adapter, and finding and parsing them would take most of the time.
  const options: ts.CompilerOptions = { ...compilerOptions, noEmit: true, noLib: true, types: [] };
  const host = ts.createCompilerHost(options);
  host.resolveModuleNameLiterals = (literals, containing, _reference, resolution) =>
    literals.map(({ text }) => (text.startsWith('.') ? ts.resolveModuleName(text, containing, resolution, host) : { resolvedModule: undefined }));
  const program = ts.createProgram(files, options, host);
  const checker = program.getTypeChecker();
  const found = new Map<string, AdapterUse>();
  for (const file of files.sort()) {
    const path = shown(file);
    if (ALLOWED.test(path)) continue;
    const source = program.getSourceFile(file);
    if (!source) continue;
    // Shown by the name the adapter declares (an import renamed with `as`, on the way or here, is the adapter's name).
    const use = (node: ts.Identifier): void => {
      let symbol = checker.getSymbolAtLocation(node);
      if (symbol && (symbol.flags & ts.SymbolFlags.Alias) !== 0) symbol = checker.getAliasedSymbol(symbol);
      for (const declaration of symbol?.declarations ?? []) {
        const declaredIn = shown(declaration.getSourceFile().fileName);
        const name = symbol!.name;
        if (ADAPTER.test(declaredIn)) found.set(`${path}\0${name}`, { file: path, name, declaredIn });
      }
    };
    // The names a file takes from another module: its imports and re-exports by name,
    // what it reads off a namespace import (`store.EmbeddedStorage`), and a type it writes
    // as `import('…').Name`. A name used in the file's body came in through one of these.
    const namespaces = new Set<string>();
    for (const statement of source.statements) {
      const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
      if (clause?.name) use(clause.name);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) use(element.name);
      if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
        for (const element of statement.exportClause.elements) if (ts.isIdentifier(element.name)) use(element.name);
      }
    }
    const visit = (node: ts.Node): void => {
      if ((ts.isPropertyAccessExpression(node) || ts.isQualifiedName(node)) && ts.isIdentifier(ts.isPropertyAccessExpression(node) ? node.expression : node.left)) {
        const left = ts.isPropertyAccessExpression(node) ? (node.expression as ts.Identifier) : (node.left as ts.Identifier);
        if (namespaces.has(left.text)) use(ts.isPropertyAccessExpression(node) ? (node.name as ts.Identifier) : node.right);
      }
      if (ts.isImportTypeNode(node) && node.qualifier) use(ts.isIdentifier(node.qualifier) ? node.qualifier : node.qualifier.right);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return [...found.values()];
}
