/**
 * `JSON.parse`, exact on every Node.js (docs/decisions.md, "Node versions"). The V8 of Node 24
 * (and later lines, at least to V8 14.6) can read an object key written with an escape (`"\""`,
 * `"\udfff"`) as the key an earlier object of the same shape had at that place (`"\\"`): its
 * parser follows a known map transition after comparing the key's raw, still escaped text. So a
 * record holding such a key read back wrong, and a request body could reach the authorizer with
 * another key than the client sent.
 *
 * Text without a backslash holds no escaped key and goes to `JSON.parse` as it is, as does every
 * text where the running V8 does not misread keys (checked once, with keys no caller uses).
 * Otherwise each key written with an escape is replaced by a plain key found nowhere in the
 * text, the text is parsed, and those keys are renamed to the decoded ones, in place, keeping
 * the order and the duplicate-key rule of `JSON.parse`. Malformed text throws `JSON.parse`'s own
 * error for the text as given. The renaming walks the value recursively: on such a V8, a value
 * with escaped keys nested deeper than the stack allows throws a RangeError (records stop at 200
 * levels and HTTP bodies at 1,000; a stdio line that deep is answered as a parse error).
 */

let misreads: boolean | undefined;

/** True when this V8 reads an escaped key as an earlier object's key (probed once). */
function keysMisread(): boolean {
  if (misreads === undefined) {
    JSON.parse('{"warrant:json-key-probe":[],"\\\\":0}');
    const keys = Object.keys(JSON.parse('{"warrant:json-key-probe":1,"\\"":2}'));
    misreads = keys[1] !== '"';
  }
  return misreads;
}

/** Parses JSON text as `JSON.parse` specifies, escaped keys included. */
export function parseJson(text: string): unknown {
  if (!text.includes('\\') || !keysMisread()) return JSON.parse(text);
  return parseWithPlainKeys(text);
}

/** The texts of the keys written with an escape, by their stand-in, and the rewritten text. */
interface Rewritten {
  readonly text: string;
  readonly keys: Map<string, string>;
}

/** The rewrite path, whatever this V8 does (exported for its tests). */
export function parseWithPlainKeys(text: string): unknown {
  const rewritten = rewriteEscapedKeys(text);
  if (rewritten === undefined || rewritten.keys.size === 0) return JSON.parse(text);
  let value: unknown;
  try {
    value = JSON.parse(rewritten.text);
  } catch {
    return JSON.parse(text);
  }
  return renameKeys(value, rewritten.keys);
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Replaces every object key written with a backslash by `"<stand-in>"`, a plain ASCII name that
 * occurs nowhere in the text. Undefined when the text is not well-formed enough to scan (an
 * unterminated string, a bad escape in a key): `JSON.parse` then reports it.
 */
function rewriteEscapedKeys(text: string): Rewritten | undefined {
  let prefix = 'warrant-key-';
  while (text.includes(prefix)) prefix += '-';
  const keys = new Map<string, string>();
  const parts: string[] = [];
  let copied = 0;
  let index = 0;
  while (index < text.length) {
    if (text[index] !== '"') {
      index++;
      continue;
    }
    const start = index;
    let escaped = false;
    index++;
    while (index < text.length && text[index] !== '"') {
      if (text[index] === '\\') {
        escaped = true;
        index++;
      }
      index++;
    }
    if (index >= text.length) return undefined;
    const end = ++index;
    let next = end;
    while (next < text.length && WHITESPACE.has(text[next] as string)) next++;
    if (!escaped || text[next] !== ':') continue;
    const standIn = `${prefix}${keys.size}`;
    try {
      keys.set(standIn, JSON.parse(text.slice(start, end)) as string);
    } catch {
      return undefined;
    }
    parts.push(text.slice(copied, start), `"${standIn}"`);
    copied = end;
  }
  parts.push(text.slice(copied));
  return { text: parts.join(''), keys };
}

/** Renames the stand-in keys of every object in a parsed value, rebuilding only those objects. */
function renameKeys(root: unknown, keys: ReadonlyMap<string, string>): unknown {
  const renamed = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) value[index] = renamed(value[index]);
      return value;
    }
    const record = value as Record<string, unknown>;
    const names = Object.keys(record);
    if (!names.some((name) => keys.has(name))) {
      for (const name of names) record[name] = renamed(record[name]);
      return record;
    }
    // Own data properties, as JSON.parse creates them (`__proto__` included); a later duplicate
    // replaces the value and keeps the first one's place, as in JSON.parse.
    const rebuilt: Record<string, unknown> = {};
    for (const name of names) {
      Object.defineProperty(rebuilt, keys.get(name) ?? name, {
        value: renamed(record[name]),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return rebuilt;
  };
  return renamed(root);
}
