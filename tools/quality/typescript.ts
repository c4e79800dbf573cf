/**
 * The TypeScript compiler, loaded with `require`. An ESM `import` of this 9 MB CommonJS file
 * makes Node scan all of it for named exports, which doubled the start-up time of every run.
 * Modules import the value from here and the types from 'typescript' (`import type`).
 */
import { createRequire } from 'node:module';
import type * as TypeScript from 'typescript';

export const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
