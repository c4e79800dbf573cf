/**
 * Syntax helpers for the governance scan: constant folding of property keys and a normalized
 * text of expressions that ignores formatting, comments, quote style and type assertions.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.js';

/** A key whose value is known: a string, or something that cannot be a string key (symbols). */
export type Constant =
  { readonly kind: 'string'; readonly value: string } | { readonly kind: 'other' };

/** `const` declarations of a file by name; null when the name is declared more than once. */
export type ConstantTable = ReadonlyMap<string, TS.Expression | null>;

type Wrapper =
  | TS.ParenthesizedExpression
  | TS.AsExpression
  | TS.SatisfiesExpression
  | TS.NonNullExpression
  | TS.TypeAssertion;

/** Parentheses and type-only wrappers, which change nothing at run time. */
export function isWrapper(node: TS.Node): node is Wrapper {
  return (
    ts.isParenthesizedExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isSatisfiesExpression(node) ||
    ts.isNonNullExpression(node) ||
    ts.isTypeAssertionExpression(node)
  );
}

export function unwrap(node: TS.Expression): TS.Expression {
  let current = node;
  while (isWrapper(current)) current = current.expression;
  return current;
}

/** The name a declaration binds in its scope, if it binds a plain identifier. */
function declaredName(node: TS.Node): string | undefined {
  if (
    ts.isVariableDeclaration(node) ||
    ts.isParameter(node) ||
    ts.isBindingElement(node) ||
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isClassDeclaration(node) ||
    ts.isClassExpression(node) ||
    ts.isEnumDeclaration(node) ||
    ts.isImportClause(node) ||
    ts.isNamespaceImport(node) ||
    ts.isImportSpecifier(node) ||
    ts.isImportEqualsDeclaration(node)
  ) {
    const name = node.name;
    return name !== undefined && ts.isIdentifier(name) ? name.text : undefined;
  }
  return undefined;
}

/**
 * The `const` declarations of a file whose name is declared nowhere else in it (no parameter,
 * import or other variable of the same name), so that the name means that value everywhere.
 */
export function collectConstants(sourceFile: TS.SourceFile): ConstantTable {
  const declarations = new Map<string, number>();
  const initializers = new Map<string, TS.Expression>();
  const visit = (node: TS.Node): void => {
    const name = declaredName(node);
    if (name !== undefined) {
      declarations.set(name, (declarations.get(name) ?? 0) + 1);
      if (
        ts.isVariableDeclaration(node) &&
        node.initializer !== undefined &&
        ts.isVariableDeclarationList(node.parent) &&
        (node.parent.flags & ts.NodeFlags.Const) !== 0
      ) {
        initializers.set(name, node.initializer);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  const table = new Map<string, TS.Expression | null>();
  for (const [name, initializer] of initializers) {
    table.set(name, declarations.get(name) === 1 ? initializer : null);
  }
  return table;
}

const STRING = (value: string): Constant => ({ kind: 'string', value });
const OTHER: Constant = { kind: 'other' };

function isSymbolExpression(node: TS.Expression): boolean {
  const target = ts.isCallExpression(node) ? unwrap(node.expression) : node;
  if (ts.isIdentifier(target)) return target.text === 'Symbol' && ts.isCallExpression(node);
  return (
    ts.isPropertyAccessExpression(target) &&
    ts.isIdentifier(target.expression) &&
    target.expression.text === 'Symbol'
  );
}

/** The value of a key expression when it can be known without running the code. */
export function constantValue(
  node: TS.Expression,
  table: ConstantTable,
  depth = 0,
): Constant | undefined {
  if (depth > 20) return undefined;
  const expression = unwrap(node);
  if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) {
    return STRING(expression.text);
  }
  if (ts.isNumericLiteral(expression)) return STRING(String(Number(expression.text)));
  if (ts.isTemplateExpression(expression)) {
    let text = expression.head.text;
    for (const span of expression.templateSpans) {
      const part = constantValue(span.expression, table, depth + 1);
      if (part?.kind !== 'string') return undefined;
      text += part.value + span.literal.text;
    }
    return STRING(text);
  }
  if (
    ts.isBinaryExpression(expression) &&
    expression.operatorToken.kind === ts.SyntaxKind.PlusToken
  ) {
    const left = constantValue(expression.left, table, depth + 1);
    const right = constantValue(expression.right, table, depth + 1);
    if (left?.kind === 'string' && right?.kind === 'string')
      return STRING(left.value + right.value);
    return undefined;
  }
  if (ts.isIdentifier(expression)) {
    const initializer = table.get(expression.text);
    return initializer ? constantValue(initializer, table, depth + 1) : undefined;
  }
  if (isSymbolExpression(expression)) return OTHER;
  return undefined;
}

const printer = ts.createPrinter({ removeComments: true });

/** Text of a property name: identifiers and literals as written, computed names folded. */
export function propertyNameText(
  name: TS.PropertyName | TS.BindingName,
  sourceFile: TS.SourceFile,
  table: ConstantTable,
): string {
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
  if (ts.isNumericLiteral(name)) return String(Number(name.text));
  if (ts.isComputedPropertyName(name)) {
    const key = constantValue(name.expression, table);
    return key?.kind === 'string'
      ? key.value
      : `[${normalizedText(name.expression, sourceFile, table)}]`;
  }
  return normalizedText(name, sourceFile, table);
}

/**
 * A canonical text of an expression: no comments or whitespace, string literals in one quote
 * style, type assertions and parentheses dropped, function bodies and object literals elided.
 */
export function normalizedText(
  node: TS.Node,
  sourceFile: TS.SourceFile,
  table: ConstantTable,
): string {
  const text = (child: TS.Node) => normalizedText(child, sourceFile, table);
  if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) return node.text;
  if (isWrapper(node)) return text(node.expression);
  switch (node.kind) {
    case ts.SyntaxKind.ThisKeyword:
      return 'this';
    case ts.SyntaxKind.SuperKeyword:
      return 'super';
    case ts.SyntaxKind.NullKeyword:
      return 'null';
    case ts.SyntaxKind.TrueKeyword:
      return 'true';
    case ts.SyntaxKind.FalseKeyword:
      return 'false';
  }
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
    return JSON.stringify(node.text);
  }
  if (ts.isNumericLiteral(node)) return String(Number(node.text));
  if (ts.isPropertyAccessExpression(node)) {
    return `${text(node.expression)}${node.questionDotToken ? '?.' : '.'}${node.name.text}`;
  }
  if (ts.isElementAccessExpression(node)) {
    const key = constantValue(node.argumentExpression, table);
    const keyText =
      key?.kind === 'string' ? JSON.stringify(key.value) : text(node.argumentExpression);
    return `${text(node.expression)}${node.questionDotToken ? '?.' : ''}[${keyText}]`;
  }
  if (ts.isCallExpression(node)) {
    const args = node.arguments.map(text).join(',');
    return `${text(node.expression)}${node.questionDotToken ? '?.' : ''}(${args})`;
  }
  if (ts.isNewExpression(node)) {
    return `new ${text(node.expression)}(${(node.arguments ?? []).map(text).join(',')})`;
  }
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return '<function>';
  if (ts.isClassExpression(node)) return '<class>';
  if (ts.isObjectLiteralExpression(node)) return '{…}';
  if (ts.isArrayLiteralExpression(node)) return '[…]';
  if (ts.isSpreadElement(node)) return `...${text(node.expression)}`;
  return printer.printNode(ts.EmitHint.Unspecified, node, sourceFile).replace(/\s+/g, '');
}

/** Whether a call's callee is one of `names` (normalized, e.g. `Reflect.apply`). */
export function isCallTo(
  call: TS.CallExpression,
  names: readonly string[],
  sourceFile: TS.SourceFile,
  table: ConstantTable,
): boolean {
  return names.includes(normalizedText(unwrap(call.expression), sourceFile, table));
}
