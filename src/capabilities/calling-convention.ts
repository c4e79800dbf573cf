/**
 * The two calling conventions (docs/api.md, "Calling conventions"): a capability object is called
 * `execute(input, context)`; `createCapability` takes `execute({ input, context })`. A plain
 * object written the second way would receive the input as its first argument and find no
 * `input` in it. `use()` refuses it where the source text shows it; this is a best effort (a
 * bound, native or minified function shows nothing), which is why the docs use createCapability
 * everywhere.
 */

/** Only the start of the source is looked at. */
const MAX_SOURCE_CHARS = 500;

/**
 * One parameter, an object pattern, at the start of a function, method or arrow:
 * `({ input })`, `async execute({ input, context }) {`, `function ({ input }) {`.
 */
const SINGLE_PATTERN =
  /^(?:async\s+)?(?:function\b\s*)?\*?\s*[\w$]*\s*\(\s*\{([^{}()]*)\}\s*(?:=\s*\{\s*\}\s*)?\)/;

const EXECUTION_KEYS: ReadonlySet<string> = new Set(['input', 'context']);

/** The property names an object pattern takes (`input`, `context: ctx`, `input = {}`). */
function patternKeys(pattern: string): string[] {
  return pattern
    .split(',')
    .map((part) => (part.split(/[:=]/)[0] ?? '').trim())
    .filter((key) => key !== '');
}

/**
 * True when `execute`'s only parameter destructures `input` or `context` and nothing else: the
 * createCapability form, which a plain capability object must not use. Never throws.
 */
export function destructuresExecution(execute: unknown): boolean {
  let source: unknown;
  try {
    source = Reflect.apply(Function.prototype.toString, execute, []);
  } catch {
    return false;
  }
  if (typeof source !== 'string') return false;
  const match = SINGLE_PATTERN.exec(source.slice(0, MAX_SOURCE_CHARS));
  if (match === null) return false;
  const keys = patternKeys(match[1] ?? '');
  return keys.length > 0 && keys.every((key) => EXECUTION_KEYS.has(key));
}
