// The module hooks of scripts/ts-loader.mjs (run in Node's loader thread).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPESCRIPT = /\.[cm]?ts$/;
const COMPILED = /\.[cm]?js$/;
const SOURCE_OF = { '.js': '.ts', '.cjs': '.cts', '.mjs': '.mts' };
const ESBUILD_VERSION = createRequire(import.meta.url)('esbuild/package.json').version;

let root = '';
let options;
let cache = '';
let esbuild;

/** The repository's root (a file: URL ending in /), from scripts/ts-loader.mjs. */
export function initialize(data) {
  root = data.root;
  // What tsx passes esbuild: the project's compiler options (class fields, import elision), this
  // Node as the target, whitespace removed, names kept, a source map without the source.
  const tsconfig = JSON.parse(readFileSync(new URL('tsconfig.json', root), 'utf8'));
  options = {
    loader: 'ts',
    platform: 'node',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcesContent: false,
    minifyWhitespace: true,
    keepNames: true,
    tsconfigRaw: { compilerOptions: tsconfig.compilerOptions ?? {} },
  };
  const digest = createHash('sha256')
    .update(JSON.stringify([ESBUILD_VERSION, options]))
    .digest('hex')
    .slice(0, 16);
  cache = join(tmpdir(), `warrant-ts-loader-${process.getuid?.() ?? 'user'}`, digest);
  mkdirSync(cache, { recursive: true });
}

/** Within the repository, not a dependency: where tsx would apply tsconfig.json. */
const ours = (url) => url?.startsWith(root) === true && !url.includes('/node_modules/');

export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  if (ours(parent)) {
    if (specifier === 'warrant') {
      return { url: new URL('src/index.ts', root).href, shortCircuit: true };
    }
    const compiled = COMPILED.exec(specifier);
    if (compiled !== null && /^(\.\.?\/|\/|file:)/.test(specifier)) {
      const url = new URL(specifier, parent);
      // A TypeScript file imports its neighbour's `.ts` by the `.js` name it compiles to; a
      // JavaScript file beside it is taken only when there is no TypeScript one.
      const source = new URL(url.href.slice(0, -compiled[0].length) + SOURCE_OF[compiled[0]]);
      if (existsSync(source)) return { url: source.href, shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !TYPESCRIPT.test(url)) return next(url, context);
  const path = fileURLToPath(url);
  const text = readFileSync(path, 'utf8');
  const commonjs = path.endsWith('.cts');
  const key = createHash('sha256').update(path).update('\0').update(text).digest('hex');
  const file = join(cache, `${key}${commonjs ? '.cjs' : '.mjs'}`);
  let source;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    esbuild ??= await import('esbuild');
    ({ code: source } = await esbuild.transform(text, {
      ...options,
      format: commonjs ? 'cjs' : 'esm',
      sourcefile: path,
    }));
    // Written whole or not at all: test processes compile the same file at once.
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, source);
    renameSync(partial, file);
  }
  return { format: commonjs ? 'commonjs' : 'module', source, shortCircuit: true };
}
