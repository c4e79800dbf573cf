/**
 * How deep JSON text nests, found in one pass over the text before it is parsed, so that a body of
 * half a million open brackets is refused in about a millisecond instead of being parsed, walked
 * and admitted (docs/guide/http.md, "HTTP routes"; docs/decisions.md "HTTP and the program").
 * Standalone, with no dependency, so any transport that parses JSON can call it first.
 */

/** The deepest nesting a JSON body may have; the outermost array or object is level 1. */
export const MAX_JSON_DEPTH = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when arrays and objects in `text` nest deeper than `maxDepth` levels. Brackets inside
 * strings do not count (escapes are honoured). Malformed text is scanned all the same and
 * never throws: the parser refuses it afterwards.
 */
export function exceedsJsonDepth(text: string, maxDepth: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
