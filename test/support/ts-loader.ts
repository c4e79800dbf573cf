// The `node` arguments that load TypeScript in a child process as the test processes load it
// (scripts/ts-loader.mjs, docs/decisions.md "Test runs"): for the fixture children that run
// src/ and test files, each of which paid tsx's start and its slower load of src/. Programs a
// user runs through tsx (the examples, `--module` files of the built program) still use tsx.
import { fileURLToPath } from 'node:url';

export const TS_LOADER: readonly string[] = [
  '--import',
  fileURLToPath(new URL('../../scripts/ts-loader.mjs', import.meta.url)),
];
