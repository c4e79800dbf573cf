// ARCHITECTURE.md and STYLE.md rules 2, 7, 19: names, import arrows, and a test for every file.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : [path];
  });
}

const sources = files('src').filter((file) => file.endsWith('.ts'));

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
    normalize(join(dirname(file), match[1] as string)),
  );
}

// Files with no behaviour of their own, and the reason they have no test twin.
const NO_TWIN: Record<string, string> = {
  'src/index.ts': 're-exports only; covered by test/contract/exports.test.ts',
  'src/plan/execution-plan.ts': 'types only',
  'src/capabilities/capability.ts': 'types only',
  'src/authorization/authorizer.ts': 'types only',
  'src/events/runtime-event.ts': 'types only',
  'src/jobs/job-store.ts': 'interface only; every store runs test/stores/job-store.contract.ts',
  'src/cli/main.ts': 'the executable; run as a child process by test/cli/cli.test.ts',
  'src/cli/usage-error.ts':
    'a one-line error class; its exit code is tested in test/cli/cli.test.ts',
  'src/cli/parse.ts': 'argument parsing; exercised through every command in test/cli/cli.test.ts',
  'src/cli/format-table.ts': 'summary tables; asserted in test/cli/cli.test.ts',
  'src/cli/load-modules.ts': '--module/--authorizer loading; error cases in test/cli/cli.test.ts',
  'src/cli/program-runtime.ts': 'program wiring; exercised by test/cli/*.test.ts',
  'src/cli/commands/run.ts': 'tested through the executable in test/cli/cli.test.ts',
  'src/cli/commands/serve.ts': 'tested through the executable in test/cli/serve.test.ts',
  'src/cli/commands/jobs.ts': 'tested through the executable in test/cli/jobs.test.ts',
  'src/cli/commands/capabilities.ts': 'tested through the executable in test/cli/cli.test.ts',
  'src/cli/commands/mcp.ts': 'tested through the executable in test/mcp/',
  'src/http/legacy-routes.ts': 'routes; tested over a socket in test/http/server.test.ts',
  'src/http/status-codes.ts': 'status mapping; every status asserted in test/http/server.test.ts',
  'src/http/parse-json-body.ts': 'hostile bodies asserted in test/http/server.test.ts',
  'src/http/safe-json.ts': 'odd values asserted in test/http/server.test.ts',
  'src/jobs/clock.ts':
    'timestamps; format and order asserted through job records in test/runtime/executor.test.ts',
  'src/jobs/open-store.ts':
    'store selection; tested through OperatorRuntime options in test/runtime/operator-runtime.test.ts and test/stores/',
};

function twin(file: string): string[] {
  const base = file.replace(/^src\//, 'test/').replace(/\.ts$/, '.test.ts');
  // Stores are tested by the shared contract suite, in test/stores/<name>.test.ts.
  const store = /^src\/jobs\/stores\/(.+)\.ts$/.exec(file);
  return store ? [base, `test/stores/${store[1]}.test.ts`] : [base];
}

describe('source layout', () => {
  it('names every src file in kebab-case (STYLE.md rule 2)', () => {
    const bad = sources.filter((file) => !/^[a-z0-9-]+\.ts$/.test(file.split('/').pop() as string));
    assert.deepEqual(bad, []);
  });

  it('keeps the arrows inward: the core never imports runtime/, cli/, http/, builtins/ or tools/', () => {
    const core = [
      'src/plan/',
      'src/capabilities/',
      'src/authorization/',
      'src/jobs/',
      'src/events/',
    ];
    const violations: string[] = [];
    for (const file of sources) {
      for (const target of imports(file)) {
        const isCore = core.some((area) => file.startsWith(area));
        if (isCore && target.startsWith('src/runtime/')) violations.push(`${file} -> ${target}`);
        const outside =
          file.startsWith('src/cli/') ||
          file.startsWith('src/http/') ||
          file.startsWith('src/builtins/');
        if (!outside && /^src\/(cli|http|builtins)\//.test(target))
          violations.push(`${file} -> ${target}`);
        if (target.startsWith('tools/')) violations.push(`${file} -> ${target}`);
      }
    }
    assert.deepEqual(violations, []);
  });

  it('gives every src file a test twin, or a written reason in the allow-list (STYLE.md rule 19)', () => {
    const missing = sources.filter(
      (file) => NO_TWIN[file] === undefined && !twin(file).some((path) => existsSync(path)),
    );
    assert.deepEqual(missing, []);
    const stale = Object.keys(NO_TWIN).filter(
      (file) => !existsSync(file) && file !== 'src/cli/commands/mcp.ts',
    );
    assert.deepEqual(stale, [], 'allow-list entries for files that no longer exist');
  });

  it('uses no _underscore private properties in src (STYLE.md rule 7)', () => {
    const offenders = sources.filter((file) =>
      /\bthis\._[a-zA-Z]/.test(readFileSync(file, 'utf8')),
    );
    assert.deepEqual(offenders, []);
    assert.ok(relative('.', 'src') === 'src');
  });
});
