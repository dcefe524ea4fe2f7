import ts from 'typescript';

/** `components["schemas"]["Name"]` → `Name`. */
function schemaName(node: ts.Node): string | undefined {
  if (!ts.isIndexedAccessTypeNode(node) || !ts.isLiteralTypeNode(node.indexType) || !ts.isStringLiteral(node.indexType.literal)) return undefined;
  const inner = node.objectType;
  if (!ts.isIndexedAccessTypeNode(inner) || !ts.isLiteralTypeNode(inner.indexType) || !ts.isStringLiteral(inner.indexType.literal)) return undefined;
  return inner.indexType.literal.text === 'schemas' && inner.objectType.getText() === 'components' ? node.indexType.literal.text : undefined;
}

const nameOf = (member: ts.TypeElement): string | undefined =>
  member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)) ? member.name.text : undefined;

/** The members of `components.schemas`, by name. */
function schemasOf(file: ts.SourceFile): Map<string, ts.TypeNode> {
  const schemas = new Map<string, ts.TypeNode>();
  file.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node) || node.name.text !== 'components') return;
    const member = node.members.find((m) => nameOf(m) === 'schemas');
    if (!member || !ts.isPropertySignature(member) || !member.type || !ts.isTypeLiteralNode(member.type)) return;
    for (const schema of member.type.members) {
      if (ts.isPropertySignature(schema) && schema.type && nameOf(schema)) schemas.set(nameOf(schema)!, schema.type);
    }
  });
  return schemas;
}

/**
 * Schemas that stand for any JSON on purpose (the control spec's JsonObject and JsonArray: a
 * logged body, a served spec). Described recursively they would be typed all the way down, but
 * a recursive schema stops tools that dereference a spec whole (Portman: "Circular $ref
 * pointer"), so their nested values are left untyped.
 */
const ANY_JSON = new Set(['JsonObject', 'JsonArray']);

/**
 * The places where a generated client would type a body loosely: `unknown`, or
 * `Record<string, never>` (an object the spec gives no properties for). Bodies are the
 * `content` of requests and responses (webhook payloads included), followed through
 * the schemas they reference (but ANY_JSON). Headers and parameters are not bodies.
 *
 * @example findLooseBodyTypes(ts.createSourceFile('t.ts', source, ts.ScriptTarget.Latest, true))
 */
export function findLooseBodyTypes(file: ts.SourceFile): string[] {
  const schemas = schemasOf(file);
  const problems = new Set<string>();
  const visited = new Set<string>();
  // `T & unknown` is `T`: the `unknown`s openapi-typescript writes for `allOf: [{if, then}]` type nothing loosely.
  const onlyUnknown = (node: ts.Node): boolean =>
    node.kind === ts.SyntaxKind.UnknownKeyword ||
    (ts.isParenthesizedTypeNode(node) && onlyUnknown(node.type)) ||
    (ts.isIntersectionTypeNode(node) && node.types.every(onlyUnknown));
  const check = (node: ts.Node, where: string): void => {
    if (ts.isIntersectionTypeNode(node) && !onlyUnknown(node)) {
      for (const member of node.types) if (!onlyUnknown(member)) check(member, where);
      return;
    }
    if (node.kind === ts.SyntaxKind.UnknownKeyword) problems.add(`${where}: unknown`);
    if (ts.isTypeReferenceNode(node) && node.typeName.getText() === 'Record' && node.typeArguments?.[1]?.kind === ts.SyntaxKind.NeverKeyword) {
      problems.add(`${where}: Record<string, never>`);
    }
    const schema = schemaName(node);
    if (schema !== undefined) {
      if (!visited.has(schema) && schemas.has(schema) && !ANY_JSON.has(schema)) {
        visited.add(schema);
        check(schemas.get(schema)!, `schema ${schema}`);
      }
      return;
    }
    let path = where;
    if (ts.isPropertySignature(node) && nameOf(node)) path = `${where}.${nameOf(node)}`;
    node.forEachChild((child) => check(child, path));
  };
  const findBodies = (node: ts.Node, where: string): void => {
    if (ts.isPropertySignature(node) && nameOf(node) === 'content' && node.type) {
      check(node.type, where);
      return;
    }
    const name = ts.isPropertySignature(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) ? (node.name as ts.Identifier | ts.StringLiteral).text : undefined;
    node.forEachChild((child) => findBodies(child, name ? `${where}${where ? '.' : ''}${name}` : where));
  };
  findBodies(file, '');
  return [...problems];
}
