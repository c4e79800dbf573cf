/**
 * Bounds of plan steps (docs/api.md, "Bounds"): a JSON Schema subset naming what each top-level
 * input field of a 2.0 step may hold. `compileBounds` judges a captured bounds value at admission
 * (every problem, each with where and a hint) and compiles it once: its patterns become regular
 * expressions then. `checkBounds` answers whether a resolved input satisfies compiled or recorded
 * bounds, or the first field that does not, with a short reason. Pure and deterministic: fields,
 * properties and keywords are tried in one fixed order, whatever order the plan wrote them in.
 */
import { Script, createContext, type Context } from 'node:vm';
import { MAX_QUOTED_CHARS, boundText, quoteText } from '../errors/describe-value.js';
import { isSafePattern } from './safe-regex.cjs';
import { suggestName } from './suggest-name.js';

/** The JSON types a bound's `type` names (`integer`: a number with no fraction). */
export type BoundType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

/** A bound: the JSON Schema subset of docs/api.md, "Bounds". Any other keyword is refused. */
export interface BoundSchema {
  type?: BoundType | BoundType[];
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  /** An ECMAScript regular expression (`u` flag, unanchored), at most 1,000 characters, safe. */
  pattern?: string;
  maxItems?: number;
  items?: BoundSchema;
  properties?: Record<string, BoundSchema>;
  required?: string[];
}

/** A step's bounds: top-level input field names to bounds. */
export type StepBounds = Record<string, BoundSchema>;

/** The keywords a bound may use, in the order `checkBounds` tries them. */
export const BOUND_KEYWORDS: readonly string[] = Object.freeze([
  'type',
  'const',
  'enum',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'maxItems',
  'items',
  'required',
  'properties',
]);

const KEYWORD_SET: ReadonlySet<string> = new Set(BOUND_KEYWORDS);

/** The type names a bound's `type` takes. */
export const BOUND_TYPES: readonly BoundType[] = Object.freeze([
  'string',
  'number',
  'integer',
  'boolean',
  'object',
  'array',
  'null',
]);

/** Longest `pattern`, in UTF-16 code units (docs/api.md, "Bounds"). */
export const MAX_PATTERN_CHARS = 1_000;

/** Longest one pattern match may take before the bound counts as failed (docs/decisions.md, "Bounds"). */
export const PATTERN_MATCH_TIMEOUT_MS = 1_000;

/** Problems reported per step's bounds: the rest are not looked for. */
export const MAX_BOUNDS_PROBLEMS = 20;

/** What a bound's value is, by JSON type (`integer` is a `number` with no fraction). */
type Kind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null';

/** One bound, compiled: every keyword checked at admission, its pattern made once. */
interface CompiledBound {
  readonly type: readonly BoundType[] | undefined;
  readonly hasConst: boolean;
  readonly constant: unknown;
  readonly choices: readonly unknown[] | undefined;
  readonly minimum: number | undefined;
  readonly exclusiveMinimum: number | undefined;
  readonly maximum: number | undefined;
  readonly exclusiveMaximum: number | undefined;
  readonly minLength: number | undefined;
  readonly maxLength: number | undefined;
  readonly pattern: { readonly source: string; readonly regex: RegExp } | undefined;
  readonly maxItems: number | undefined;
  readonly items: CompiledBound | undefined;
  readonly required: readonly string[] | undefined;
  /** Sorted by key (code units), so the first failing property is the same after a restart. */
  readonly properties: readonly (readonly [string, CompiledBound])[] | undefined;
}

/** A step's bounds, compiled: its fields sorted by name (code units). */
export interface CompiledBounds {
  readonly fields: readonly (readonly [string, CompiledBound])[];
}

/** Why bounds are refused: where below the step's `bounds`, what is wrong, what to do. */
export interface BoundsProblem {
  readonly path: readonly string[];
  readonly message: string;
  readonly hint?: string;
}

export type CompiledBoundsResult =
  | { readonly ok: true; readonly compiled: CompiledBounds }
  | { readonly ok: false; readonly problems: readonly BoundsProblem[] };

/** What `checkBounds` answers: satisfied, or the first field that is not and why. */
export type BoundsCheck =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** The top-level input field whose bound failed. */
      readonly field: string;
      /** `amount 250 is above maximum 100`: names the value's place below the input. */
      readonly why: string;
    };

const SATISFIED: BoundsCheck = Object.freeze({ ok: true });

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): Kind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as Kind;
}

/** A bound value, quoted for a message: JSON, cut to 80 characters. */
function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = 'an unreadable value';
  }
  return boundText(text, MAX_QUOTED_CHARS);
}

function describeKind(value: unknown): string {
  const kind = kindOf(value);
  if (kind === 'array' || kind === 'object') return `an ${kind}`;
  if (kind === 'null') return 'null';
  return `a ${kind}`;
}

/** Keys in code-unit order: the order checks and digests do not depend on how a plan was written. */
function sortedKeys(value: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Collects problems up to MAX_BOUNDS_PROBLEMS; `full` once there are that many. */
class Problems {
  readonly list: BoundsProblem[] = [];
  get full(): boolean {
    return this.list.length >= MAX_BOUNDS_PROBLEMS;
  }
  add(path: readonly string[], message: string, hint?: string): void {
    if (this.full) return;
    this.list.push(hint === undefined ? { path, message } : { path, message, hint });
  }
}

function isLength(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function compilePattern(
  value: unknown,
  path: readonly string[],
  problems: Problems,
): CompiledBound['pattern'] {
  if (typeof value !== 'string') {
    problems.add(path, `must be a string, got ${describeKind(value)}`);
    return undefined;
  }
  if (value.length > MAX_PATTERN_CHARS) {
    problems.add(
      path,
      `is ${value.length} characters; a pattern has at most ${MAX_PATTERN_CHARS}`,
      'shorten the pattern, or bound the field with enum or const',
    );
    return undefined;
  }
  let regex: RegExp;
  try {
    // JSON Schema patterns are ECMAScript regular expressions, unanchored; `u` reads \p{...}.
    regex = new RegExp(value, 'u');
  } catch (error) {
    problems.add(
      path,
      `${quoteText(value)} is not a regular expression (${boundText((error as Error).message, MAX_QUOTED_CHARS)})`,
    );
    return undefined;
  }
  if (!isSafePattern(value)) {
    problems.add(
      path,
      `${quoteText(value)} is refused as unsafe by safe-regex2 (nested or too many repetitions)`,
      'write a pattern with no repetition inside a repetition, or bound the field with enum',
    );
    return undefined;
  }
  return { source: value, regex };
}

function compileType(
  value: unknown,
  path: readonly string[],
  problems: Problems,
): readonly BoundType[] | undefined {
  const list = Array.isArray(value) ? (value as unknown[]) : [value];
  const hint = `one of ${BOUND_TYPES.map((type) => `"${type}"`).join(', ')}`;
  if (list.length === 0) {
    problems.add(path, 'must name at least one type', hint);
    return undefined;
  }
  const types: BoundType[] = [];
  for (const type of list) {
    if (typeof type !== 'string' || !BOUND_TYPES.includes(type as BoundType)) {
      problems.add(path, `${shown(type)} is not a type a bound names`, hint);
      return undefined;
    }
    if (types.includes(type as BoundType)) {
      problems.add(path, `names ${shown(type)} twice`);
      return undefined;
    }
    types.push(type as BoundType);
  }
  return types;
}

function compileRequired(
  value: unknown,
  path: readonly string[],
  problems: Problems,
): readonly string[] | undefined {
  if (!Array.isArray(value)) {
    problems.add(path, `must be an array of property names, got ${describeKind(value)}`);
    return undefined;
  }
  const names: string[] = [];
  for (const name of value as unknown[]) {
    if (typeof name !== 'string') {
      problems.add(path, `must hold strings only, got ${describeKind(name)}`);
      return undefined;
    }
    if (names.includes(name)) {
      problems.add(path, `names ${quoteText(name)} twice`);
      return undefined;
    }
    names.push(name);
  }
  return names;
}

/** The keyword meant by an unknown one, when one is close (`maximun` → `maximum`). */
function keywordHint(key: string): string {
  const close = suggestName(key, BOUND_KEYWORDS);
  return close === undefined
    ? `a bound takes ${BOUND_KEYWORDS.join(', ')}`
    : `did you mean ${quoteText(close)}?`;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One bound (a JSON Schema object of the subset), every keyword judged. */
function compileBound(
  value: unknown,
  path: readonly string[],
  problems: Problems,
): CompiledBound | undefined {
  if (!isPlainObject(value)) {
    problems.add(path, `must be an object of bound keywords, got ${describeKind(value)}`);
    return undefined;
  }
  const before = problems.list.length;
  const bound: Mutable<CompiledBound> = {
    type: undefined,
    hasConst: false,
    constant: undefined,
    choices: undefined,
    minimum: undefined,
    exclusiveMinimum: undefined,
    maximum: undefined,
    exclusiveMaximum: undefined,
    minLength: undefined,
    maxLength: undefined,
    pattern: undefined,
    maxItems: undefined,
    items: undefined,
    required: undefined,
    properties: undefined,
  };
  for (const key of sortedKeys(value)) {
    if (problems.full) return undefined;
    const at = [...path, key];
    const inner = value[key];
    if (!KEYWORD_SET.has(key)) {
      problems.add(at, `${quoteText(key)} is not a bound keyword`, keywordHint(key));
      continue;
    }
    switch (key) {
      case 'type':
        bound.type = compileType(inner, at, problems);
        break;
      case 'const':
        bound.hasConst = true;
        bound.constant = inner;
        break;
      case 'enum':
        if (!Array.isArray(inner) || inner.length === 0)
          problems.add(at, `must be a non-empty array, got ${describeKind(inner)}`);
        else bound.choices = inner as unknown[];
        break;
      case 'minimum':
      case 'exclusiveMinimum':
      case 'maximum':
      case 'exclusiveMaximum':
        if (typeof inner !== 'number') problems.add(at, `must be a number, got ${shown(inner)}`);
        else bound[key] = inner;
        break;
      case 'minLength':
      case 'maxLength':
      case 'maxItems':
        if (!isLength(inner))
          problems.add(at, `must be a non-negative integer, got ${shown(inner)}`);
        else bound[key] = inner;
        break;
      case 'pattern':
        bound.pattern = compilePattern(inner, at, problems);
        break;
      case 'items':
        if (Array.isArray(inner))
          problems.add(at, 'must be one bound for every item (an object), not an array');
        else bound.items = compileBound(inner, at, problems);
        break;
      case 'required':
        bound.required = compileRequired(inner, at, problems);
        break;
      case 'properties':
        bound.properties = compileProperties(inner, at, problems);
        break;
    }
  }
  return problems.list.length === before ? bound : undefined;
}

function compileProperties(
  value: unknown,
  path: readonly string[],
  problems: Problems,
): CompiledBound['properties'] {
  if (!isPlainObject(value)) {
    problems.add(
      path,
      `must be an object from property names to bounds, got ${describeKind(value)}`,
    );
    return undefined;
  }
  const properties: (readonly [string, CompiledBound])[] = [];
  for (const key of sortedKeys(value)) {
    if (problems.full) return undefined;
    const bound = compileBound(value[key], [...path, key], problems);
    if (bound !== undefined) properties.push([key, bound]);
  }
  return properties;
}

/** Compiled bounds by the frozen bounds object they came from: patterns are made once per plan. */
const compiledOf = new WeakMap<object, CompiledBounds>();

/** The bounds `compileBounds` made: a step's bounds can never pass for compiled ones. */
const COMPILED = new WeakSet<object>();

function isCompiled(value: unknown): value is CompiledBounds {
  return typeof value === 'object' && value !== null && COMPILED.has(value);
}

/**
 * Judges a step's bounds (the runtime's frozen plain-data copy): every problem, or the compiled
 * bounds. `declared` are the capability's declared input fields, when it declares fields: a
 * bound on any other field is refused. Never throws.
 */
export function compileBounds(bounds: unknown, declared?: readonly string[]): CompiledBoundsResult {
  const problems = new Problems();
  if (!isPlainObject(bounds)) {
    problems.add(
      [],
      `must be an object from input field names to bounds, got ${describeKind(bounds)}`,
    );
    return { ok: false, problems: problems.list };
  }
  const fields: (readonly [string, CompiledBound])[] = [];
  for (const key of sortedKeys(bounds)) {
    if (problems.full) break;
    if (declared !== undefined && !declared.includes(key)) {
      const close = suggestName(key, declared);
      problems.add(
        [key],
        `${quoteText(key)} is not an input field of this capability`,
        close === undefined
          ? `declared fields: ${declared.map((name) => quoteText(name)).join(', ')}`
          : `did you mean ${quoteText(close)}?`,
      );
      continue;
    }
    const bound = compileBound(bounds[key], [key], problems);
    if (bound !== undefined) fields.push([key, bound]);
  }
  if (problems.list.length > 0) return { ok: false, problems: problems.list };
  const compiled: CompiledBounds = { fields };
  COMPILED.add(compiled);
  // Only a frozen copy (the runtime's) is remembered: another could change after it was judged.
  if (Object.isFrozen(bounds)) compiledOf.set(bounds, compiled);
  return { ok: true, compiled };
}

/** JSON equality: arrays in order, objects by their keys whatever their order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, index) => sameJson(item, other[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && sameJson(left[key], right[key]));
}

/** Characters as JSON Schema counts them: Unicode code points. */
function codePoints(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    const next = text.charCodeAt(index + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index++;
    count++;
  }
  return count;
}

function typeMatches(type: BoundType, value: unknown): boolean {
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return kindOf(value) === type;
}

/** Where pattern matches run, with a time limit: made on first use. */
let matcher: { readonly context: Context; readonly script: Script } | undefined;

/** True, false, or undefined when the match took longer than PATTERN_MATCH_TIMEOUT_MS. */
function matches(regex: RegExp, text: string): boolean | undefined {
  matcher ??= {
    context: createContext(Object.create(null) as object),
    script: new Script('regex.test(text)'),
  };
  const { context, script } = matcher;
  context.regex = regex;
  context.text = text;
  try {
    return script.runInContext(context, { timeout: PATTERN_MATCH_TIMEOUT_MS }) === true;
  } catch {
    return undefined;
  } finally {
    context.regex = undefined;
    context.text = undefined;
  }
}

function pathText(path: readonly string[]): string {
  return boundText(path.join('.'), MAX_QUOTED_CHARS);
}

/** The keywords that apply to one kind of value only, and that kind. */
const KEYWORD_KIND: Readonly<Record<string, Kind>> = {
  minimum: 'number',
  exclusiveMinimum: 'number',
  maximum: 'number',
  exclusiveMaximum: 'number',
  minLength: 'string',
  maxLength: 'string',
  pattern: 'string',
  maxItems: 'array',
  items: 'array',
  required: 'object',
  properties: 'object',
};

/**
 * A keyword that applies to another kind of value than `value`'s: a failure unless the bound's
 * `type` names the value's type (stricter than JSON Schema; docs/decisions.md, "Bounds").
 */
function wrongKind(
  bound: CompiledBound,
  value: unknown,
  path: readonly string[],
): string | undefined {
  if (bound.type !== undefined) return undefined;
  const kind = kindOf(value);
  for (const keyword of BOUND_KEYWORDS) {
    const applies = KEYWORD_KIND[keyword];
    if (applies === undefined || applies === kind) continue;
    if (bound[keyword as keyof CompiledBound] === undefined) continue;
    return `${pathText(path)} is ${describeKind(value)}; ${keyword} applies to ${applies === 'array' || applies === 'object' ? `an ${applies}` : `a ${applies}`}`;
  }
  return undefined;
}

/** The first way `value` fails `bound`, or undefined. */
function failure(
  bound: CompiledBound,
  value: unknown,
  path: readonly string[],
): string | undefined {
  const at = pathText(path);
  if (bound.type !== undefined && !bound.type.some((type) => typeMatches(type, value))) {
    return `${at} is ${describeKind(value)}, not ${bound.type.length === 1 ? `of type ${bound.type[0]}` : `one of the types ${bound.type.join(', ')}`}`;
  }
  if (bound.hasConst && !sameJson(value, bound.constant))
    return `${at} ${shown(value)} is not ${shown(bound.constant)}`;
  if (bound.choices !== undefined && !bound.choices.some((choice) => sameJson(value, choice)))
    return `${at} ${shown(value)} is not one of ${boundText(bound.choices.map(shown).join(', '), MAX_QUOTED_CHARS * 2)}`;
  const misplaced = wrongKind(bound, value, path);
  if (misplaced !== undefined) return misplaced;
  if (typeof value === 'number') {
    if (bound.minimum !== undefined && value < bound.minimum)
      return `${at} ${value} is below minimum ${bound.minimum}`;
    if (bound.exclusiveMinimum !== undefined && value <= bound.exclusiveMinimum)
      return `${at} ${value} is not above exclusiveMinimum ${bound.exclusiveMinimum}`;
    if (bound.maximum !== undefined && value > bound.maximum)
      return `${at} ${value} is above maximum ${bound.maximum}`;
    if (bound.exclusiveMaximum !== undefined && value >= bound.exclusiveMaximum)
      return `${at} ${value} is not below exclusiveMaximum ${bound.exclusiveMaximum}`;
  } else if (typeof value === 'string') {
    if (bound.minLength !== undefined || bound.maxLength !== undefined) {
      const length = codePoints(value);
      if (bound.minLength !== undefined && length < bound.minLength)
        return `${at} is ${length} characters, fewer than minLength ${bound.minLength}`;
      if (bound.maxLength !== undefined && length > bound.maxLength)
        return `${at} is ${length} characters, more than maxLength ${bound.maxLength}`;
    }
    if (bound.pattern !== undefined) {
      const matched = matches(bound.pattern.regex, value);
      if (matched === undefined)
        return `${at} took over ${PATTERN_MATCH_TIMEOUT_MS} ms to match pattern ${quoteText(bound.pattern.source)}`;
      if (!matched) return `${at} does not match pattern ${quoteText(bound.pattern.source)}`;
    }
  } else if (Array.isArray(value)) {
    if (bound.maxItems !== undefined && value.length > bound.maxItems)
      return `${at} has ${value.length} items, more than maxItems ${bound.maxItems}`;
    if (bound.items !== undefined) {
      for (let index = 0; index < value.length; index++) {
        const found = failure(bound.items, value[index], [...path, String(index)]);
        if (found !== undefined) return found;
      }
    }
  } else if (isPlainObject(value)) {
    for (const name of bound.required ?? [])
      if (!Object.hasOwn(value, name)) return `${pathText([...path, name])} is absent (required)`;
    for (const [name, inner] of bound.properties ?? []) {
      if (!Object.hasOwn(value, name)) continue;
      const found = failure(inner, value[name], [...path, name]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** A refused check: bounds that could not be compiled fail closed, naming their first field. */
function invalidBounds(bounds: unknown): BoundsCheck {
  const first = isPlainObject(bounds) ? sortedKeys(bounds)[0] : undefined;
  return { ok: false, field: first ?? '', why: 'the bounds are not valid bounds' };
}

/**
 * Whether `input` (a step's resolved input) satisfies `bounds`: each bounded field must be
 * present and satisfy its bound. Fields are tried by name (code units), so the answer is the same
 * whatever order the bounds were written or recorded in. Bounds compiled at admission are used as
 * compiled; others (read from a record) are compiled first, and invalid ones fail. Never throws.
 */
export function checkBounds(bounds: StepBounds | CompiledBounds, input: unknown): BoundsCheck {
  let compiled: CompiledBounds | undefined;
  if (isCompiled(bounds)) compiled = bounds;
  else {
    compiled = compiledOf.get(bounds);
    if (compiled === undefined) {
      const result = compileBounds(bounds);
      if (!result.ok) return invalidBounds(bounds);
      compiled = result.compiled;
    }
  }
  for (const [field, bound] of compiled.fields) {
    if (!isPlainObject(input) || !Object.hasOwn(input, field))
      return { ok: false, field, why: `${pathText([field])} is absent` };
    const why = failure(bound, input[field], [field]);
    if (why !== undefined) return { ok: false, field, why };
  }
  return SATISFIED;
}
