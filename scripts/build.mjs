// Builds the dual package with plain tsc: ESM (NodeNext) and CommonJS, each with declarations.
// dist/cjs gets its own package.json so Node treats its .js files as CommonJS. The audit
// console's static files (README "Audit console") are copied as they are next to the module that
// serves them; the HTTP server is ESM only (tsconfig.cjs.json leaves src/http out).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');

rmSync('dist', { recursive: true, force: true });
for (const config of ['tsconfig.esm.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });
}
mkdirSync('dist/cjs', { recursive: true });
writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');
for (const file of ['index.html', 'app.js', 'app.css']) {
  copyFileSync(`src/http/console/${file}`, `dist/esm/http/console/${file}`);
}
