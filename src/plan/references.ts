/**
 * Result references (docs/api.md, docs/decisions.md "Result references"):
 * `{ $ref: 'steps.<stepId>.result(.<segment>)*' }`. Recognition, parsing against the ids of
 * earlier steps, collection through nested input, and resolution that walks OWN properties only.
 *
 * Where references live (one rule, for admission and step time): at the input root, and below it
 * through plain objects (own enumerable string keys) and arrays (index keys only). Admission
 * also looks inside everything else it can see (class instances, functions, boxed primitives,
 * an array's non-index keys) and refuses a reference found there: it would never be resolved.
 */
import { ErrorCode } from '../errors/error-codes.js';

/** Where a reference sits inside a step input: keys from the input root down to it. */
export type InputPath = readonly (string | number)[];

export interface ParsedReference {
  /** Index of the earlier step whose result is addressed. */
  readonly stepIndex: number;
  readonly stepId: string;
  /** Own-property path inside that result (may be empty: the whole result). */
  readonly segments: readonly string[];
  readonly text: string;
}

export interface LocatedReference extends ParsedReference {
  readonly path: InputPath;
}

export type ReferenceParseFailure = {
  readonly code:
    | typeof ErrorCode.INVALID_RESULT_REFERENCE
    | typeof ErrorCode.RESULT_REFERENCE_NOT_EARLIER
    | typeof ErrorCode.AMBIGUOUS_RESULT_REFERENCE;
  readonly message: string;
};

const PREFIX = 'steps.';

/**
 * Longest `$ref` text admitted, in UTF-16 code units; a longer one is INVALID_RESULT_REFERENCE.
 * The text is recorded once, with the step input, and every message quotes it cut to 80
 * characters, so a huge text is neither echoed several times nor stored several times.
 */
export const MAX_REFERENCE_TEXT_CHARS = 4_096;

/** Text cut to 80 characters for messages, built only when there is something to report. */
function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Reference text (or a key) for messages, quoted and cut to 80 characters. */
function quote(text: string): string {
  return JSON.stringify(clip(text));
}
const RESULT = '.result';

/**
 * The `$ref` text of a value that is a result reference, or undefined. A reference is an object
 * whose ONLY own key is `$ref`, held as an own string data property (a getter does not count).
 */
export function referenceText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  // Most values have no own `$ref`: `Object.hasOwn` answers that without a call into the
  // runtime. The descriptor is read only when there is one (a getter does not count).
  if (!Object.hasOwn(value, '$ref')) return undefined;
  const descriptor = Reflect.getOwnPropertyDescriptor(value, '$ref');
  if (
    descriptor === undefined ||
    !('value' in descriptor) ||
    typeof descriptor.value !== 'string'
  ) {
    return undefined;
  }
  if (Array.isArray(value)) return undefined;
  const keys = Reflect.ownKeys(value);
  return keys.length === 1 ? descriptor.value : undefined;
}

/** The first step index of each usable step id of a plan (a Map fits). */
export interface StepIndex {
  get(id: string): number | undefined;
}

/**
 * Parses `$ref` text against the ids of the plan. `idIndex` maps each step id to the index of its
 * first occurrence. Ids may contain dots: every `.result` boundary in the text proposes a
 * candidate id, and exactly one EARLIER step must match.
 */
export function parseReference(
  text: string,
  currentIndex: number,
  idIndex: StepIndex,
): ParsedReference | ReferenceParseFailure {
  if (text.length > MAX_REFERENCE_TEXT_CHARS) {
    return {
      code: ErrorCode.INVALID_RESULT_REFERENCE,
      message: `result reference ${quote(text)} is ${text.length} characters long; at most ${MAX_REFERENCE_TEXT_CHARS} are accepted`,
    };
  }
  if (!text.startsWith(PREFIX)) {
    return {
      code: ErrorCode.INVALID_RESULT_REFERENCE,
      message: `result reference ${quote(text)} must look like "steps.<stepId>.result" or "steps.<stepId>.result.<path>"`,
    };
  }
  const body = text.slice(PREFIX.length);
  const earlier: ParsedReference[] = [];
  let laterOrSelf: string | undefined;
  let sawResultBoundary = false;
  let at = body.indexOf(RESULT);
  while (at !== -1) {
    const end = at + RESULT.length;
    if (end === body.length || body[end] === '.') {
      sawResultBoundary = true;
      const candidate = body.slice(0, at);
      const target = idIndex.get(candidate);
      if (target !== undefined) {
        if (target < currentIndex) {
          const rest = end === body.length ? '' : body.slice(end + 1);
          earlier.push({
            stepIndex: target,
            stepId: candidate,
            segments: rest === '' && end === body.length ? [] : rest.split('.'),
            text,
          });
        } else {
          laterOrSelf = candidate;
        }
      }
    }
    at = body.indexOf(RESULT, at + 1);
  }
  if (earlier.length > 1) {
    const ids = earlier.map((ref) => JSON.stringify(ref.stepId)).join(' and ');
    return {
      code: ErrorCode.AMBIGUOUS_RESULT_REFERENCE,
      message: `result reference ${quote(text)} matches more than one earlier step (${ids}); rename a step`,
    };
  }
  const match = earlier[0];
  if (match === undefined) {
    if (laterOrSelf !== undefined) {
      return {
        code: ErrorCode.RESULT_REFERENCE_NOT_EARLIER,
        message: `result reference ${quote(text)} points to step ${JSON.stringify(laterOrSelf)}, which does not run before this step`,
      };
    }
    if (!sawResultBoundary) {
      return {
        code: ErrorCode.INVALID_RESULT_REFERENCE,
        message: `result reference ${quote(text)} must look like "steps.<stepId>.result" or "steps.<stepId>.result.<path>"`,
      };
    }
    return {
      code: ErrorCode.RESULT_REFERENCE_NOT_EARLIER,
      message: `result reference ${quote(text)} names no earlier step of this plan`,
    };
  }
  if (match.segments.some((segment) => segment === '')) {
    return {
      code: ErrorCode.INVALID_RESULT_REFERENCE,
      message: `result reference ${quote(text)} has an empty path segment`,
    };
  }
  return match;
}

/** How a container's children are reached: where references found below it are resolved. */
type ContainerKind = 'plain' | 'array' | 'other' | 'bytes';

function containerKind(value: unknown): ContainerKind | undefined {
  if (typeof value === 'function') return 'other';
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) return 'array';
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return 'plain';
  // Typed arrays, Buffers and DataViews hold bytes: nothing in them can be a reference.
  return ArrayBuffer.isView(value) ? 'bytes' : 'other';
}

/** True for the canonical index keys of an array: '0', '1', ... '4294967294'. */
function isArrayIndex(key: string): boolean {
  const index = Number(key);
  return Number.isInteger(index) && index >= 0 && index < 4_294_967_295 && String(index) === key;
}

/** How many containers one input may hold, each shared container counted at every place. */
export const MAX_INPUT_CONTAINERS = 1_000_000;

/**
 * How long the paths of all references of one input may be together, in characters (each key
 * counts its length plus one). Each reference keeps its path, and messages name it: without a
 * bound, thousands of references under a deep or long-keyed container cost time and memory of
 * their count times their depth (a 1 MiB body could stall the process for minutes).
 */
export const MAX_REFERENCE_PATH_CHARS = 1_000_000;

/** One place of the walk: a value, where it sits, and whether a reference there is resolved. */
interface Place {
  readonly value: unknown;
  readonly at: PathNode | undefined;
  /** Undefined where a reference is resolved; otherwise why it would not be. */
  readonly misplaced: string | undefined;
  readonly exit?: true;
}

/**
 * Finds every reference inside an input, in document order: `visit(text, path)` for each one
 * where it is resolved (the root itself, or below it through plain objects and array indexes),
 * `misplaced(path, why)` for each one anywhere else admission can see (inside a class instance,
 * a function or a boxed primitive, or under an array's non-index key such as '01', '-0' or
 * 'foo'). Only own enumerable string keys are walked; Map and Set entries are not own
 * properties, and typed arrays hold bytes.
 *
 * A container that appears at several places where references are resolved (a shared object,
 * which JavaScript inputs allow) is walked at each place, so every occurrence is found; a
 * container that contains itself is not entered again below itself (cycles end the walk).
 * Where references are not resolved, each container is entered once. Iterative, so deep nesting
 * is safe; more than MAX_INPUT_CONTAINERS containers, or references whose paths are longer than
 * MAX_REFERENCE_PATH_CHARS together, throw.
 */
export function collectReferences(
  input: unknown,
  visit: (text: string, path: InputPath) => void,
  misplaced: (path: InputPath, why: string) => void = () => {},
): void {
  // The containers on the path from the root to the one being walked: only they make a cycle.
  // They are also the containers whose `exit` entry is still on the stack, so the Set is made
  // from the stack when a container is first met below another: a flat input (the usual one)
  // makes none (docs/decisions.md, "Allocation on the hot path").
  let ancestors: Set<object> | undefined;
  // Containers already walked where references are not resolved: each is entered once. Made
  // when first needed: most inputs have none, and admission walks every step's input.
  let walkedElsewhere: Set<object> | undefined;
  let budget = MAX_INPUT_CONTAINERS;
  let pathBudget = MAX_REFERENCE_PATH_CHARS;
  // Depth-first with an explicit stack; children are pushed in reverse so that references are
  // visited in document order. An `exit` entry removes its container from the ancestors once
  // everything below it has been walked. Each entry links to its parent's path node instead of
  // copying the path: copies cost time and memory quadratic in the depth, and a body nested a
  // few ten thousand levels deep (well under the HTTP body limit) exhausted the heap.
  const stack: Place[] = [{ value: input, at: undefined, misplaced: undefined }];
  while (stack.length > 0) {
    const { value, at, misplaced: why, exit } = stack.pop() as Place;
    if (exit === true) {
      ancestors?.delete(value as object);
      continue;
    }
    const text = referenceText(value);
    if (text !== undefined) {
      pathBudget -= at?.chars ?? 0;
      if (pathBudget < 0) {
        throw new RangeError(
          `input holds result references whose paths are longer than ${MAX_REFERENCE_PATH_CHARS} characters together`,
        );
      }
      if (why === undefined) visit(text, pathOf(at));
      else misplaced(pathOf(at), why);
      continue;
    }
    const kind = containerKind(value);
    if (kind === undefined || kind === 'bytes') continue;
    const container = value as object;
    if (ancestors === undefined && stack.length > 0) ancestors = pendingExits(stack);
    if (ancestors?.has(container) === true) continue;
    if (why !== undefined || kind === 'other') {
      walkedElsewhere ??= new Set<object>();
      if (walkedElsewhere.has(container)) continue;
      walkedElsewhere.add(container);
    }
    if (--budget < 0) {
      throw new RangeError(
        `input holds more than ${MAX_INPUT_CONTAINERS} objects and arrays (shared ones counted at each place)`,
      );
    }
    ancestors?.add(container);
    stack.push({ value: container, at, misplaced: why, exit: true });
    const keys = Object.keys(container);
    for (let k = keys.length - 1; k >= 0; k--) {
      const key = keys[k] as string;
      const child: unknown = (container as Record<string, unknown>)[key];
      if ((typeof child !== 'object' || child === null) && typeof child !== 'function') continue;
      const chars = (at?.chars ?? 0) + key.length + 1;
      const index = kind === 'array' && isArrayIndex(key);
      let childWhy = why;
      if (childWhy === undefined && kind === 'other') {
        childWhy =
          'a result reference inside an object that is neither a plain object nor an array (a class instance, a function, a boxed primitive, ...) is never resolved';
      } else if (childWhy === undefined && kind === 'array' && !index) {
        childWhy = `a result reference under the non-index array key ${quote(key)} is never resolved (arrays hold references at index keys only)`;
      }
      stack.push({
        value: child,
        at: { parent: at, key: index ? Number(key) : key, chars },
        misplaced: childWhy,
      });
    }
  }
}

/** The containers whose `exit` entry is on the stack: the ancestors of the next place. */
function pendingExits(stack: readonly Place[]): Set<object> {
  const containers = new Set<object>();
  for (const place of stack) if (place.exit === true) containers.add(place.value as object);
  return containers;
}

/** One step of an input path, linked to the step above it (undefined: the input root). */
interface PathNode {
  readonly parent: PathNode | undefined;
  readonly key: string | number;
  /** Length of the path down to here: its keys' lengths plus one each. */
  readonly chars: number;
}

/** The keys from the input root down to `node`, built only where a reference is found. */
function pathOf(node: PathNode | undefined): InputPath {
  const path: (string | number)[] = [];
  for (let step = node; step !== undefined; step = step.parent) path.push(step.key);
  return path.reverse();
}

/** Thrown by resolution; the executor records it as the step's failure. */
export class ReferenceResolutionError extends Error {
  override readonly name = 'ReferenceResolutionError';
}

/** Walks `segments` from `value`, reading OWN properties only (docs/api.md, "Plans and result references"). */
export function resolvePath(value: unknown, reference: ParsedReference): unknown {
  let current = value;
  let walked = `steps.${reference.stepId}.result`;
  for (const segment of reference.segments) {
    if ((typeof current !== 'object' && typeof current !== 'function') || current === null) {
      throw new ReferenceResolutionError(
        `Result reference ${quote(reference.text)} cannot read ${quote(segment)}: ${clip(walked)} is ${current === null ? 'null' : typeof current}`,
      );
    }
    if (!Object.prototype.hasOwnProperty.call(current, segment)) {
      throw new ReferenceResolutionError(
        `Result reference ${quote(reference.text)} cannot read ${quote(segment)}: it is not an own property of ${clip(walked)}`,
      );
    }
    current = (current as Record<string, unknown>)[segment];
    walked += `.${segment}`;
  }
  return current;
}

/**
 * Builds the resolved input of a step: containers along each reference path are copied (the
 * caller's input is never written to) and each reference is replaced by the value it addresses.
 * With no references the input root itself is returned, by identity.
 */
export function resolveInput(
  input: unknown,
  references: readonly LocatedReference[],
  results: readonly unknown[],
): unknown {
  if (references.length === 0) return input;
  let root: unknown = input;
  // Each container is copied once, however many references go through it; with one reference
  // nothing can be met twice, and no Map is made.
  const copies = references.length > 1 ? new Map<object, object>() : undefined;
  for (const reference of references) {
    const value = resolvePath(results[reference.stepIndex], reference);
    const { path } = reference;
    if (path.length === 0) return value;
    root = copyOf(root, path, 0, copies);
    let parent = root as Record<string | number, unknown>;
    for (let depth = 0; depth < path.length - 1; depth++) {
      const key = path[depth] as string | number;
      const child = copyOf(parent[key], path, depth + 1, copies);
      setOwn(parent, key, child);
      parent = child as Record<string | number, unknown>;
    }
    setOwn(parent, path[path.length - 1] as string | number, value);
  }
  return root;
}

/** The copy of a container on a reference path (the one already made, when `copies` has it). */
function copyOf(
  container: unknown,
  path: InputPath,
  depth: number,
  copies: Map<object, object> | undefined,
): object {
  if (typeof container !== 'object' || container === null) {
    const where = ['input', ...path.slice(0, depth)].join('.');
    throw new ReferenceResolutionError(
      `Input changed after admission: ${clip(where)} is no longer an object`,
    );
  }
  if (copies === undefined) return copyContainer(container);
  let copy = copies.get(container);
  if (copy === undefined) {
    copy = copyContainer(container);
    copies.set(container, copy);
    copies.set(copy, copy);
  }
  return copy;
}

/**
 * A copy of a container on a reference path: an array stays an array (its index keys were
 * walked; its other own enumerable keys come along as data), any other object becomes a plain
 * object with the same own enumerable properties.
 */
function copyContainer(container: object): object {
  if (!Array.isArray(container)) return { ...container };
  const list = container as unknown[];
  const copy = list.slice();
  for (const key of Object.keys(list)) {
    if (!isArrayIndex(key)) defineOwn(copy, key, (list as unknown as Record<string, unknown>)[key]);
  }
  return copy;
}

/**
 * Writes a key of a copy. A copy holds its keys as writable own data properties (made by spread,
 * `slice` or `defineOwn`), so a key it has already is assigned, which is cheaper. Every other
 * case is defined as before: a key the copy lacks (never set through a prototype), `__proto__`,
 * and an array's string keys (`length` is its own, and not a data key of the input).
 */
function setOwn(target: object, key: string | number, value: unknown): void {
  if (
    key !== '__proto__' &&
    (typeof key === 'number' || !Array.isArray(target)) &&
    Object.hasOwn(target, key)
  ) {
    (target as Record<string | number, unknown>)[key] = value;
  } else {
    defineOwn(target, key, value);
  }
}

/** Writes an own data property, whatever the key (`__proto__` included). */
function defineOwn(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}
