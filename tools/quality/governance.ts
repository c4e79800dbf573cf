/**
 * Section 5 of the report: finds every place that invokes a capability's `execute`, or the job
 * executor (`executeAdmittedPlan`, `runStep`), or takes one of them out for a later call. The
 * scan is syntactic (no type checker): it reads the property name `execute` whatever the object.
 *
 * Each site gets an anchor: file, enclosing declaration, kind, normalized callee text and an
 * ordinal among identical sites of that declaration. The enclosing declaration is the outermost
 * one in the file: a top-level function, a function held by a top-level name, or a class member
 * (`class X > method`); functions, callbacks and closures nested inside it are not part of the
 * anchor. So formatting, comments and restructuring the body of an approved declaration keep its
 * sites approved, while a new site (another callee text, one more identical site, or a site in
 * another declaration or file) is new. The full chain of enclosing functions (`scope`) is shown
 * in the report, and so are line numbers; neither is anchored.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.js';
import { QualityFailure } from './failure.js';
import { usageOf } from './usage.js';
import {
  collectConstants,
  isCallTo,
  constantValue,
  isWrapper,
  normalizedText,
  propertyNameText,
  unwrap,
  type Constant,
  type ConstantTable,
} from './syntax.js';

/** The capability method whose invocation is governed. */
export const CAPABILITY_METHOD = 'execute';
/** The executor's functions: calling them runs capabilities. */
export const EXECUTOR_FUNCTIONS: ReadonlySet<string> = new Set(['executeAdmittedPlan', 'runStep']);

/** Directories scanned, and the extensions of the files scanned in them. */
export const SCANNED_DIRECTORIES = ['src/', 'examples/', 'bench/', 'scripts/'] as const;
const SCRIPT_KINDS: Readonly<Record<string, TS.ScriptKind>> = {
  '.ts': ts.ScriptKind.TS,
  '.mts': ts.ScriptKind.TS,
  '.cts': ts.ScriptKind.TS,
  '.tsx': ts.ScriptKind.TSX,
  '.js': ts.ScriptKind.JS,
  '.mjs': ts.ScriptKind.JS,
  '.cjs': ts.ScriptKind.JS,
  '.jsx': ts.ScriptKind.JSX,
};

export type SiteKind =
  /** `f(...)`, `f?.(...)`, `new f(...)`, `` f`...` `` where f is an execute/executor reference. */
  | 'call'
  /** `f.call(...)`, `f.apply(...)`, `f.bind(...)`. */
  | 'indirect-call'
  /** `Reflect.apply(f, ...)`. */
  | 'reflect-apply'
  /** `const g = f` or `g = f`: a local name for later calls (whose calls are sites too). */
  | 'alias'
  /** `const { execute } = x`, `{ execute: run }` parameters, `({ execute } = x)`. */
  | 'destructure'
  /** The reference escapes otherwise: passed as an argument, stored, returned. */
  | 'extract'
  /** `Reflect.getOwnPropertyDescriptor(x, 'execute')` and the Object equivalent. */
  | 'descriptor'
  /** A computed key the analyser cannot evaluate, used in a call (or a `Reflect.get`). */
  | 'dynamic';

/** What a site reaches: a capability's execute, the executor, a local alias, or unknown. */
export type SiteTarget = 'execute' | 'executor' | 'alias' | 'unknown';

export interface Site {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly kind: SiteKind;
  readonly target: SiteTarget;
  /** Normalized callee text (no whitespace, comments, type assertions). */
  readonly text: string;
  /** Enclosing function/method/class chain, outermost first (shown, not anchored). */
  readonly scope: string;
  /** `file#declaration#kind#text#ordinal`, see the module comment. */
  readonly anchor: string;
}

export interface SyntaxProblem {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export interface ScanResult {
  readonly sites: Site[];
  readonly problems: SyntaxProblem[];
}

export function isScannedPath(path: string): boolean {
  const extension = /\.[a-z]+$/.exec(path)?.[0] ?? '';
  return (
    SCANNED_DIRECTORIES.some((directory) => path.startsWith(directory)) &&
    SCRIPT_KINDS[extension] !== undefined
  );
}

interface Frame {
  readonly name: string;
  /** Names declared in this function: true when the name is an alias of execute/executor. */
  readonly bindings: Map<string, boolean>;
  anonymous: number;
}

type Reference = SiteTarget | 'dynamic-element' | 'dynamic-reflect';

function targetOfKey(key: Constant | undefined): SiteTarget | undefined {
  if (key?.kind !== 'string') return undefined;
  if (key.value === CAPABILITY_METHOD) return 'execute';
  return EXECUTOR_FUNCTIONS.has(key.value) ? 'executor' : undefined;
}

/** `({ a, b: c } = value)`: an object literal written to, not read. */
function isAssignmentPattern(node: TS.Node): node is TS.ObjectLiteralExpression {
  return (
    ts.isObjectLiteralExpression(node) &&
    ts.isBinaryExpression(node.parent) &&
    node.parent.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
    node.parent.left === node
  );
}

/** Whether an identifier reads a value (not a declaration name, a property name or a type). */
function isValueIdentifier(identifier: TS.Identifier): boolean {
  const parent = identifier.parent;
  if (ts.isShorthandPropertyAssignment(parent)) return !isAssignmentPattern(parent.parent);
  if (ts.isPropertyAssignment(parent) && isAssignmentPattern(parent.parent)) return false;
  if (
    ts.isTypeReferenceNode(parent) ||
    ts.isTypeQueryNode(parent) ||
    ts.isQualifiedName(parent) ||
    ts.isLabeledStatement(parent) ||
    ts.isBreakOrContinueStatement(parent)
  ) {
    return false;
  }
  const named = parent as { name?: unknown; propertyName?: unknown };
  return named.name !== identifier && named.propertyName !== identifier;
}

function parseDiagnosticsOf(sourceFile: TS.SourceFile): readonly TS.Diagnostic[] {
  const diagnostics: unknown = (sourceFile as unknown as { parseDiagnostics?: unknown })
    .parseDiagnostics;
  if (!Array.isArray(diagnostics)) {
    throw new QualityFailure('this TypeScript version does not expose parse diagnostics');
  }
  return diagnostics as TS.Diagnostic[];
}

class Scanner {
  readonly sites: Site[] = [];
  readonly #file: string;
  readonly #sourceFile: TS.SourceFile;
  readonly #constants: ConstantTable;
  readonly #frames: Frame[] = [];
  readonly #ordinals = new Map<string, number>();

  constructor(file: string, sourceFile: TS.SourceFile) {
    this.#file = file;
    this.#sourceFile = sourceFile;
    this.#constants = collectConstants(sourceFile);
  }

  run(): void {
    this.#frames.push({ name: '', bindings: new Map(), anonymous: 0 });
    this.#visit(this.#sourceFile);
  }

  #text(node: TS.Node): string {
    return normalizedText(node, this.#sourceFile, this.#constants);
  }

  #key(name: TS.PropertyName | TS.BindingName): string {
    return propertyNameText(name, this.#sourceFile, this.#constants);
  }

  #current(): Frame {
    return this.#frames.at(-1) as Frame;
  }

  #declare(name: string, alias: boolean): void {
    this.#current().bindings.set(name, alias);
  }

  /** An assignment makes an alias where the name was declared (or here if it was not). */
  #assign(name: string): void {
    const frame = this.#frames.findLast((candidate) => candidate.bindings.has(name));
    (frame ?? this.#current()).bindings.set(name, true);
  }

  #isAlias(name: string): boolean {
    return this.#frames.findLast((frame) => frame.bindings.has(name))?.bindings.get(name) === true;
  }

  #visit(node: TS.Node): void {
    const name = this.#frameName(node);
    if (name !== undefined) this.#frames.push({ name, bindings: new Map(), anonymous: 0 });
    this.#inspect(node);
    ts.forEachChild(node, (child) => this.#visit(child));
    if (name !== undefined) this.#frames.pop();
  }

  #anonymous(): string {
    const frame = this.#current();
    frame.anonymous += 1;
    return `<anonymous ${frame.anonymous}>`;
  }

  /** The name of a function or class: its own, else where it is stored or passed. */
  #frameName(node: TS.Node): string | undefined {
    if (ts.isFunctionDeclaration(node)) return node.name?.text ?? 'default';
    if (ts.isClassDeclaration(node)) return `class ${node.name?.text ?? 'default'}`;
    if (ts.isClassExpression(node)) {
      return `class ${node.name?.text ?? this.#ownerName(node) ?? this.#anonymous()}`;
    }
    if (
      ts.isMethodDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node)
    ) {
      const isStatic = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword);
      const accessor = ts.isGetAccessorDeclaration(node)
        ? 'get '
        : ts.isSetAccessorDeclaration(node)
          ? 'set '
          : '';
      const owner = ts.isObjectLiteralExpression(node.parent)
        ? `${this.#ownerName(node.parent) ?? '{}'}.`
        : '';
      return `${isStatic === true ? 'static ' : ''}${accessor}${owner}${this.#key(node.name)}`;
    }
    if (ts.isConstructorDeclaration(node)) return 'constructor';
    if (ts.isClassStaticBlockDeclaration(node)) return 'static {}';
    if (ts.isFunctionExpression(node) || ts.isArrowFunction(node)) {
      const own = ts.isFunctionExpression(node) ? node.name?.text : undefined;
      return own ?? this.#ownerName(node) ?? this.#anonymous();
    }
    return undefined;
  }

  /**
   * Where an anonymous function, class or object literal lives: `const name = …`, `key: …`,
   * `target = …`, or `callee("first literal argument")@argumentIndex` for a callback such as
   * `app.post('/route', async () => …)`.
   */
  #ownerName(node: TS.Node): string | undefined {
    let child = node;
    let parent = node.parent;
    while (isWrapper(parent)) {
      child = parent;
      parent = parent.parent;
    }
    if (ts.isVariableDeclaration(parent) && parent.initializer === child) {
      return ts.isIdentifier(parent.name) ? parent.name.text : undefined;
    }
    if (ts.isPropertyAssignment(parent) && parent.initializer === child) {
      const owner = this.#ownerName(parent.parent);
      const key = this.#key(parent.name);
      return owner === undefined ? key : `${owner}.${key}`;
    }
    if (ts.isPropertyDeclaration(parent) && parent.initializer === child) {
      return this.#key(parent.name);
    }
    if (
      ts.isBinaryExpression(parent) &&
      parent.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      parent.right === child
    ) {
      return this.#text(parent.left);
    }
    if ((ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.arguments) {
      const index = parent.arguments.indexOf(child as TS.Expression);
      if (index < 0) return undefined;
      const first = parent.arguments[0];
      const label =
        first !== undefined &&
        (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))
          ? JSON.stringify(first.text)
          : '';
      const callee = this.#text(parent.expression);
      return `${ts.isNewExpression(parent) ? 'new ' : ''}${callee}(${label})@${index}`;
    }
    if (ts.isExportAssignment(parent)) return 'default';
    return undefined;
  }

  #inspect(node: TS.Node): void {
    if ((ts.isVariableDeclaration(node) || ts.isParameter(node)) && ts.isIdentifier(node.name)) {
      this.#declare(node.name.text, false); // shadows an outer alias of the same name
    }
    if (ts.isImportSpecifier(node)) this.#inspectImport(node);
    if (ts.isBindingElement(node)) this.#inspectBindingElement(node);
    if (isAssignmentPattern(node)) this.#inspectAssignmentPattern(node);
    if (ts.isCallExpression(node)) this.#inspectDescriptorRead(node);
    const reference = this.#referenceOf(node);
    if (reference !== undefined) this.#inspectReference(node as TS.Expression, reference);
  }

  #isCallOf(node: TS.CallExpression, names: readonly string[]): boolean {
    return isCallTo(node, names, this.#sourceFile, this.#constants);
  }

  #referenceOf(node: TS.Node): Reference | undefined {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) {
      return targetOfKey({ kind: 'string', value: node.name.text });
    }
    if (ts.isElementAccessExpression(node)) {
      const key = constantValue(node.argumentExpression, this.#constants);
      return key === undefined ? 'dynamic-element' : targetOfKey(key);
    }
    if (ts.isCallExpression(node) && this.#isCallOf(node, ['Reflect.get'])) {
      const keyNode = node.arguments[1];
      if (keyNode === undefined) return undefined;
      const key = constantValue(keyNode, this.#constants);
      return key === undefined ? 'dynamic-reflect' : targetOfKey(key);
    }
    if (ts.isIdentifier(node) && isValueIdentifier(node)) {
      if (EXECUTOR_FUNCTIONS.has(node.text)) return 'executor';
      if (this.#isAlias(node.text)) return 'alias';
    }
    return undefined;
  }

  #inspectReference(node: TS.Expression, reference: Reference): void {
    const usage = usageOf(node, this.#sourceFile, this.#constants);
    if (usage.kind === 'none') return;
    if (reference === 'dynamic-element' || reference === 'dynamic-reflect') {
      const invoked =
        usage.kind === 'call' || usage.kind === 'indirect-call' || usage.kind === 'reflect-apply';
      if (invoked || reference === 'dynamic-reflect') {
        this.#add('dynamic', 'unknown', node, this.#text(node));
      }
      return;
    }
    switch (usage.kind) {
      case 'alias':
        this.#assign(usage.name);
        this.#add('alias', reference, node, `${usage.name}=${this.#text(node)}`);
        return;
      case 'indirect-call':
        this.#add('indirect-call', reference, node, this.#text(usage.via));
        return;
      default:
        this.#add(usage.kind, reference, node, this.#text(node));
    }
  }

  /** Where destructured values come from, for the site text. */
  #patternSource(pattern: TS.BindingPattern): string {
    const owner = pattern.parent;
    if (ts.isVariableDeclaration(owner)) {
      if (owner.initializer !== undefined) return this.#text(owner.initializer);
      const loop = owner.parent.parent;
      return ts.isForOfStatement(loop) ? `of ${this.#text(loop.expression)}` : '?';
    }
    if (ts.isParameter(owner)) {
      return `<parameter ${owner.parent.parameters.indexOf(owner)}>`;
    }
    if (ts.isBindingElement(owner) && ts.isObjectBindingPattern(owner.parent)) {
      return `${this.#patternSource(owner.parent)}.${this.#key(owner.propertyName ?? owner.name)}`;
    }
    return '?';
  }

  #inspectBindingElement(element: TS.BindingElement): void {
    if (!ts.isObjectBindingPattern(element.parent) || element.dotDotDotToken) return;
    const keyNode = element.propertyName ?? element.name;
    let key: Constant | undefined;
    if (ts.isComputedPropertyName(keyNode)) {
      key = constantValue(keyNode.expression, this.#constants);
      if (key === undefined) {
        const source = this.#patternSource(element.parent);
        const text = `{[${this.#text(keyNode.expression)}]}=${source}`;
        this.#add('dynamic', 'unknown', element, text);
        return;
      }
    } else if (!ts.isObjectBindingPattern(keyNode) && !ts.isArrayBindingPattern(keyNode)) {
      key = { kind: 'string', value: this.#key(keyNode) };
    }
    const target = targetOfKey(key);
    if (target === undefined || key?.kind !== 'string') return;
    const local = ts.isIdentifier(element.name) ? element.name.text : undefined;
    if (local !== undefined) this.#declare(local, true);
    const renamed = local !== undefined && local !== key.value ? `:${local}` : '';
    const text = `{${key.value}${renamed}}=${this.#patternSource(element.parent)}`;
    this.#add('destructure', target, element, text);
  }

  #inspectAssignmentPattern(pattern: TS.ObjectLiteralExpression): void {
    const parent = pattern.parent as TS.BinaryExpression;
    for (const property of pattern.properties) {
      let key: string | undefined;
      let local: TS.Expression | undefined;
      if (ts.isShorthandPropertyAssignment(property)) {
        key = property.name.text;
        local = property.name;
      } else if (ts.isPropertyAssignment(property)) {
        key = this.#key(property.name);
        local = unwrap(property.initializer);
      }
      const target = targetOfKey(key === undefined ? undefined : { kind: 'string', value: key });
      if (target === undefined || key === undefined) continue;
      if (local !== undefined && ts.isIdentifier(local)) this.#assign(local.text);
      const renamed =
        local !== undefined && this.#text(local) !== key ? `:${this.#text(local)}` : '';
      this.#add('destructure', target, property, `{${key}${renamed}}=${this.#text(parent.right)}`);
    }
  }

  /** `import { runStep as step }`: calls of `step` are executor calls. */
  #inspectImport(specifier: TS.ImportSpecifier): void {
    const imported = specifier.propertyName ?? specifier.name;
    if (ts.isIdentifier(imported) && EXECUTOR_FUNCTIONS.has(imported.text)) {
      if (imported.text !== specifier.name.text) this.#declare(specifier.name.text, true);
    }
  }

  #inspectDescriptorRead(call: TS.CallExpression): void {
    const readers = ['Reflect.getOwnPropertyDescriptor', 'Object.getOwnPropertyDescriptor'];
    const keyNode = call.arguments[1];
    if (keyNode === undefined || !this.#isCallOf(call, readers)) return;
    const target = targetOfKey(constantValue(keyNode, this.#constants));
    if (target !== undefined) this.#add('descriptor', target, call, this.#text(call));
  }

  #add(kind: SiteKind, target: SiteTarget, node: TS.Node, text: string): void {
    const names = this.#frames.slice(1).map((frame) => frame.name);
    const scope = names.join(' > ') || '<module>';
    // The outermost declaration: a class with its member, else the top-level function.
    const declaration = names.slice(0, names[0]?.startsWith('class ') === true ? 2 : 1);
    const identity = `${declaration.join(' > ') || '<module>'}#${kind}#${text}`;
    const ordinal = this.#ordinals.get(identity) ?? 0;
    this.#ordinals.set(identity, ordinal + 1);
    const start = this.#sourceFile.getLineAndCharacterOfPosition(node.getStart(this.#sourceFile));
    this.sites.push({
      file: this.#file,
      line: start.line + 1,
      column: start.character + 1,
      kind,
      target,
      text,
      scope,
      anchor: `${this.#file}#${identity}#${ordinal}`,
    });
  }
}

/** Parses one file and returns its sites, or its syntax errors (then no sites). */
export function scanFile(file: string, text: string): ScanResult {
  const extension = /\.[a-z]+$/.exec(file)?.[0] ?? '.ts';
  const sourceFile = ts.createSourceFile(
    file,
    text,
    { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
    true,
    SCRIPT_KINDS[extension] ?? ts.ScriptKind.TS,
  );
  const diagnostics = parseDiagnosticsOf(sourceFile);
  if (diagnostics.length > 0) {
    const problems = diagnostics.map((diagnostic): SyntaxProblem => {
      const at = sourceFile.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      return {
        file,
        line: at.line + 1,
        column: at.character + 1,
        message: ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '),
      };
    });
    return { sites: [], problems };
  }
  const scanner = new Scanner(file, sourceFile);
  scanner.run();
  return { sites: scanner.sites, problems: [] };
}
