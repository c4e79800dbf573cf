// The TypeScript loader of the test processes (`node --import ./scripts/ts-loader.mjs`, as
// scripts/run-tests.mjs starts every test file): what tsx does for this repository's tests, with
// less work per module (docs/decisions.md, "Test runs"). Its hooks (scripts/ts-loader-hooks.mjs)
// resolve a relative `.js`/`.cjs`/`.mjs` import to the `.ts`/`.cts`/`.mts` file beside it, the
// bare `warrant` to src/index.ts (tsconfig.json's `paths`), and compile each TypeScript file with
// esbuild once: the output is kept in a cache under the temporary directory, keyed by the file's
// path and content. Fixture children that run src/ load it the same way (test/support/ts-loader.ts);
// the programs a user runs through tsx (the examples, `--module` files) still use tsx.
import { register } from 'node:module';

// Stack traces name the TypeScript file and line, as under tsx.
process.setSourceMapsEnabled(true);
// The repository's root, wherever the process runs.
register('./ts-loader-hooks.mjs', import.meta.url, {
  data: { root: new URL('../', import.meta.url).href },
});
