/**
 * The Cedar engine: `@cedar-policy/cedar-wasm`, the Cedar project's own WebAssembly build, in its
 * Node.js flavour (CommonJS, reads its .wasm from the package files synchronously, no network).
 * Required on first use, never at import (docs/decisions.md, "Light import"), and a CommonJS
 * module in both builds (`.cts`) so that `cedarAuthorizer()` can parse its policies at once.
 */
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';

export type Cedar = typeof CedarWasm;

let loaded: Cedar | undefined;

/** The Cedar module, loaded the first time it is asked for. */
export function loadCedar(): Cedar {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('@cedar-policy/cedar-wasm/nodejs') as Cedar;
  return loaded;
}
