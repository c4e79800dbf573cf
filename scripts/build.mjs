// Builds the dual package: tsc compiles and declares, esbuild joins tsc's ES modules into a few
// files (docs/decisions.md, "Build": Node pays per module loaded, and the root's 97 modules made
// `import` 1.9x `node -e ''`). No package is bundled; the declarations stay tsc's, one .d.ts per
// module, in dist/esm (NodeNext) and dist/cjs (CommonJS).
//
// - dist/esm: the entry points keep their paths (the package root, the `warrant` program, and the
//   modules the light-import test loads on their own); what two of them share goes to
//   dist/esm/chunks/, so each module is evaluated once per process. The audit console's static
//   files (docs/guide/http.md, "Audit console") are copied next to the module serving them:
//   into chunks/.
// - dist/cjs: the root in one CommonJS file (the HTTP server and the program are ESM only), with a
//   `{"type":"commonjs"}` package.json; a store module it opens later is in it, evaluated on first use.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');

/** The ESM modules addressed from outside the bundle, relative to dist/esm. */
const ESM_ENTRIES = [
  'index.js',
  'cli/main.js',
  'cli/commands/run.js',
  'cli/commands/serve.js',
  'cli/commands/worker.js',
  'http/server.js',
  'stores/sqlite/sqlite-store.js',
];
const CONSOLE_MODULE = 'http/console/routes.js';
const CONSOLE_FILES = ['index.html', 'app.js', 'app.css'];

rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.esm.json', '--outDir', 'dist/esm-modules'], {
  stdio: 'inherit',
});
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.cjs.json', '--emitDeclarationOnly'], {
  stdio: 'inherit',
});
writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');

/**
 * What both joins share: nothing from node_modules, no comments. Not keepNames: its wrappers cost
 * 4% of a one-step plan, and no exported name is changed (test/contract/exports.test.ts).
 */
const common = {
  absWorkingDir: process.cwd(),
  bundle: true,
  platform: 'node',
  target: 'node20',
  packages: 'external',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
};
const joined = await build({
  ...common,
  entryPoints: ESM_ENTRIES.map((entry) => `dist/esm-modules/${entry}`),
  outbase: 'dist/esm-modules',
  outdir: 'dist/esm',
  splitting: true,
  format: 'esm',
  // The two CommonJS modules (.cts: the SQLite driver, the Cedar engine) call `require`, which an
  // ES module has not; each output file gets one, made for its own location.
  banner: {
    js: "import { createRequire as __warrantCreateRequire } from 'node:module';\nconst require = __warrantCreateRequire(import.meta.url);",
  },
  chunkNames: 'chunks/[name]-[hash]',
});
const root = await build({
  ...common,
  entryPoints: ['dist/esm-modules/index.js'],
  outfile: 'dist/cjs/index.js',
  format: 'cjs',
});
const consoleOutput = Object.entries(joined.metafile.outputs).find(
  ([, output]) => `dist/esm-modules/${CONSOLE_MODULE}` in output.inputs,
)?.[0];
// The server is shared by the program and its own entry, so it is in a chunk; the files go there,
// where scripts/verify-package.mjs looks for them.
if (!consoleOutput?.startsWith('dist/esm/chunks/')) {
  throw new Error(`${CONSOLE_MODULE} is in ${consoleOutput}, not in dist/esm/chunks/`);
}
for (const file of CONSOLE_FILES) {
  copyFileSync(`src/http/console/${file}`, join(dirname(consoleOutput), file));
}
for (const file of readdirSync('dist/esm-modules', { recursive: true, encoding: 'utf8' })) {
  if (!file.endsWith('.d.ts') && !file.endsWith('.d.cts')) continue;
  const to = join('dist/esm', file);
  mkdirSync(dirname(to), { recursive: true });
  renameSync(join('dist/esm-modules', file), to);
}
rmSync('dist/esm-modules', { recursive: true, force: true });
console.log(
  `dist/esm: ${Object.keys(joined.metafile.outputs).length} files from ${
    Object.keys(joined.metafile.inputs).length
  } modules (console files next to ${relative('dist/esm', consoleOutput)}); dist/cjs/index.js from ${
    Object.keys(root.metafile.inputs).length
  }`,
);
