/**
 * How the governance scan judges what is done with a reference to `execute` or the executor:
 * invoked (`call`, `indirect-call`, `reflect-apply`), kept under a local name (`alias`), handed
 * on (`extract`), or only checked or overwritten (`none`: typeof, comparisons, assignment).
 */
import type * as TS from 'typescript';
import { isCallTo, isWrapper, unwrap, constantValue, type ConstantTable } from './syntax.js';
import { ts } from './typescript.js';

/** How a reference to execute or the executor is used; `none` for checks and definitions. */
export type Usage =
  | { readonly kind: 'none' }
  | { readonly kind: 'call' | 'reflect-apply' | 'extract' }
  | { readonly kind: 'indirect-call'; readonly via: TS.Expression }
  | { readonly kind: 'alias'; readonly name: string };

const NONE: Usage = { kind: 'none' };
const INDIRECT = new Set(['call', 'apply', 'bind']);
const CHECKS = new Set<TS.SyntaxKind>([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
  ts.SyntaxKind.InstanceOfKeyword,
  ts.SyntaxKind.InKeyword,
  ts.SyntaxKind.AmpersandAmpersandToken,
  ts.SyntaxKind.CommaToken,
]);

const isAssignment = (kind: TS.SyntaxKind) =>
  kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;

/** How the value of a reference is used, looking through parentheses, `??`, `||`, `? :`. */
export function usageOf(
  node: TS.Expression,
  sourceFile: TS.SourceFile,
  constants: ConstantTable,
): Usage {
  let current: TS.Node = node;
  for (;;) {
    const parent: TS.Node = current.parent;
    if (isWrapper(parent)) {
      current = parent;
      continue;
    }
    if (ts.isBinaryExpression(parent)) {
      const operator = parent.operatorToken.kind;
      const passes =
        operator === ts.SyntaxKind.BarBarToken ||
        operator === ts.SyntaxKind.QuestionQuestionToken ||
        ((operator === ts.SyntaxKind.AmpersandAmpersandToken ||
          operator === ts.SyntaxKind.CommaToken) &&
          parent.right === current);
      if (passes) {
        current = parent;
        continue;
      }
    }
    if (ts.isConditionalExpression(parent) && parent.condition !== current) {
      current = parent;
      continue;
    }
    break;
  }
  const parent = current.parent;
  if (
    ((ts.isCallExpression(parent) || ts.isNewExpression(parent)) &&
      parent.expression === current) ||
    (ts.isTaggedTemplateExpression(parent) && parent.tag === current) ||
    (ts.isDecorator(parent) && parent.expression === current)
  ) {
    return { kind: 'call' };
  }
  if (ts.isPropertyAccessExpression(parent) && parent.expression === current) {
    return INDIRECT.has(parent.name.text) ? { kind: 'indirect-call', via: parent } : NONE;
  }
  if (ts.isElementAccessExpression(parent) && parent.expression === current) {
    // `f['call'](...)`; an unknown key might be 'call' too, so it counts as one.
    const key = constantValue(parent.argumentExpression, constants);
    return key === undefined || (key.kind === 'string' && INDIRECT.has(key.value))
      ? { kind: 'indirect-call', via: parent }
      : NONE;
  }
  if (
    ts.isCallExpression(parent) &&
    parent.arguments[0] === current &&
    isCallTo(parent, ['Reflect.apply'], sourceFile, constants)
  ) {
    return { kind: 'reflect-apply' };
  }
  if (
    ts.isTypeOfExpression(parent) ||
    ts.isDeleteExpression(parent) ||
    ts.isVoidExpression(parent) ||
    (ts.isPrefixUnaryExpression(parent) && parent.operator === ts.SyntaxKind.ExclamationToken) ||
    ts.isConditionalExpression(parent) || // the condition (branches were passed through)
    ts.isExpressionStatement(parent) ||
    ts.isIfStatement(parent) ||
    ts.isWhileStatement(parent) ||
    ts.isDoStatement(parent) ||
    (ts.isForStatement(parent) && parent.condition === current)
  ) {
    return NONE;
  }
  if (ts.isBinaryExpression(parent)) {
    const operator = parent.operatorToken.kind;
    if (CHECKS.has(operator)) return NONE;
    if (isAssignment(operator) && parent.left === current) return NONE; // a definition
    if (operator === ts.SyntaxKind.EqualsToken) {
      const left = unwrap(parent.left);
      return ts.isIdentifier(left) ? { kind: 'alias', name: left.text } : { kind: 'extract' };
    }
    return { kind: 'extract' };
  }
  if (ts.isVariableDeclaration(parent) && parent.initializer === current) {
    return ts.isIdentifier(parent.name)
      ? { kind: 'alias', name: parent.name.text }
      : { kind: 'extract' };
  }
  return { kind: 'extract' };
}
