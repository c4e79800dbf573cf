/**
 * Result references (API.md §3): `{ $ref: 'steps.<stepId>.result(.<segment>)*' }`.
 * Recognition, parsing against the ids of earlier steps, collection through nested input, and
 * resolution that walks OWN properties only (spec §2.2).
 */

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
    'INVALID_RESULT_REFERENCE' | 'RESULT_REFERENCE_NOT_EARLIER' | 'AMBIGUOUS_RESULT_REFERENCE';
  readonly message: string;
};

const PREFIX = 'steps.';

/** Reference text for messages, built only when there is something to report. */
function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}
const RESULT = '.result';

/**
 * The `$ref` text of a value that is a result reference, or undefined. A reference is an object
 * whose ONLY own key is `$ref`, held as an own string data property (a getter does not count).
 */
export function referenceText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  // The descriptor first: most values have no `$ref`, and this allocates nothing for them.
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

/**
 * Parses `$ref` text against the ids of the plan. `idIndex` maps each step id to the index of its
 * first occurrence. Ids may contain dots: every `.result` boundary in the text proposes a
 * candidate id, and exactly one EARLIER step must match.
 */
export function parseReference(
  text: string,
  currentIndex: number,
  idIndex: ReadonlyMap<string, number>,
): ParsedReference | ReferenceParseFailure {
  if (!text.startsWith(PREFIX)) {
    return {
      code: 'INVALID_RESULT_REFERENCE',
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
      code: 'AMBIGUOUS_RESULT_REFERENCE',
      message: `result reference ${quote(text)} matches more than one earlier step (${ids}); rename a step`,
    };
  }
  const match = earlier[0];
  if (match === undefined) {
    if (laterOrSelf !== undefined) {
      return {
        code: 'RESULT_REFERENCE_NOT_EARLIER',
        message: `result reference ${quote(text)} points to step ${JSON.stringify(laterOrSelf)}, which does not run before this step`,
      };
    }
    if (!sawResultBoundary) {
      return {
        code: 'INVALID_RESULT_REFERENCE',
        message: `result reference ${quote(text)} must look like "steps.<stepId>.result" or "steps.<stepId>.result.<path>"`,
      };
    }
    return {
      code: 'RESULT_REFERENCE_NOT_EARLIER',
      message: `result reference ${quote(text)} names no earlier step of this plan`,
    };
  }
  if (match.segments.some((segment) => segment === '')) {
    return {
      code: 'INVALID_RESULT_REFERENCE',
      message: `result reference ${quote(text)} has an empty path segment`,
    };
  }
  return match;
}

function isReferenceContainer(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
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

/**
 * Finds every reference inside an input: the root itself, or nested in plain objects and arrays
 * (own enumerable string keys), and calls `visit(text, path)` for each, in document order.
 * A container that appears at several places (a shared object, which JavaScript inputs allow) is
 * walked at each place, so every occurrence of a reference is found; a container that contains
 * itself is not entered again below itself (cycles end the walk). Iterative, so deep nesting is
 * safe; more than MAX_INPUT_CONTAINERS containers, or references whose paths are longer than
 * MAX_REFERENCE_PATH_CHARS together, throw.
 */
export function collectReferences(
  input: unknown,
  visit: (text: string, path: InputPath) => void,
): void {
  // The containers on the path from the root to the one being walked: only they make a cycle.
  const ancestors = new Set<object>();
  let budget = MAX_INPUT_CONTAINERS;
  let pathBudget = MAX_REFERENCE_PATH_CHARS;
  // Depth-first with an explicit stack; children are pushed in reverse so that references are
  // visited in document order. An `exit` entry removes its container from the ancestors once
  // everything below it has been walked. Each entry links to its parent's path node instead of
  // copying the path: copies cost time and memory quadratic in the depth, and a body nested a
  // few ten thousand levels deep (well under the HTTP body limit) exhausted the heap.
  const stack: { value: unknown; at: PathNode | undefined; exit?: true }[] = [
    { value: input, at: undefined },
  ];
  while (stack.length > 0) {
    const { value, at, exit } = stack.pop() as {
      value: unknown;
      at: PathNode | undefined;
      exit?: true;
    };
    if (exit === true) {
      ancestors.delete(value as object);
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
      visit(text, pathOf(at));
      continue;
    }
    if (!isReferenceContainer(value) || ancestors.has(value)) continue;
    if (--budget < 0) {
      throw new RangeError(
        `input holds more than ${MAX_INPUT_CONTAINERS} objects and arrays (shared ones counted at each place)`,
      );
    }
    ancestors.add(value);
    stack.push({ value, at, exit: true });
    const isArray = Array.isArray(value);
    const keys = Object.keys(value);
    for (let k = keys.length - 1; k >= 0; k--) {
      const key = keys[k] as string;
      const child: unknown = (value as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        const chars = (at?.chars ?? 0) + key.length + 1;
        stack.push({ value: child, at: { parent: at, key: isArray ? Number(key) : key, chars } });
      }
    }
  }
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

/** Walks `segments` from `value`, reading OWN properties only (spec §2.2, API.md §3). */
export function resolvePath(value: unknown, reference: ParsedReference): unknown {
  let current = value;
  let walked = `steps.${reference.stepId}.result`;
  for (const segment of reference.segments) {
    if ((typeof current !== 'object' && typeof current !== 'function') || current === null) {
      throw new ReferenceResolutionError(
        `Result reference "${reference.text}" cannot read "${segment}": ${walked} is ${current === null ? 'null' : typeof current}`,
      );
    }
    if (!Object.prototype.hasOwnProperty.call(current, segment)) {
      throw new ReferenceResolutionError(
        `Result reference "${reference.text}" cannot read "${segment}": it is not an own property of ${walked}`,
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
  const copies = new Map<object, object>();
  const copyOf = (container: unknown, where: string): Record<string | number, unknown> => {
    if (typeof container !== 'object' || container === null) {
      throw new ReferenceResolutionError(
        `Input changed after admission: ${where} is no longer an object`,
      );
    }
    let copy = copies.get(container);
    if (copy === undefined) {
      copy = Array.isArray(container) ? container.slice() : { ...container };
      copies.set(container, copy);
      copies.set(copy, copy);
    }
    return copy as Record<string | number, unknown>;
  };
  for (const reference of references) {
    const value = resolvePath(results[reference.stepIndex], reference);
    if (reference.path.length === 0) return value;
    root = copyOf(root, 'input');
    let parent = root as Record<string | number, unknown>;
    let where = 'input';
    for (let depth = 0; depth < reference.path.length - 1; depth++) {
      const key = reference.path[depth] as string | number;
      where += `.${key}`;
      const child = copyOf(parent[key], where);
      parent[key] = child;
      parent = child;
    }
    parent[reference.path[reference.path.length - 1] as string | number] = value;
  }
  return root;
}
