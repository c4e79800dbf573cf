// The quality harness (tools/quality, `npm run quality -- --base <commit>`), run against
// throwaway git repositories: report sections, control changes, governance sites and their
// baseline, and every exit-2 cause. Most tests call runHarness in this process (each child
// process would load tsx and the TypeScript compiler again); three run the command itself
// (repo.runCli) to prove its wiring: --help (exit 0), a review (exit 1), a failure (exit 2).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { BASELINE_PATH, CLASSIFICATIONS, parseBaseline } from '../../tools/quality/baseline.js';
import { lineDiff } from '../../tools/quality/growth.js';
import {
  ANCHORS,
  BASELINE_SITES,
  EXECUTOR_TS,
  PACKAGE_JSON,
  ROUTES_TS,
  baselineText,
  cloneTemplate,
  copyOfThisTree,
  emptyRepo,
  lineOf,
  removeWorkspace,
  type RunResult,
} from './fixture-repo.js';

after(removeWorkspace);

// Every test may start at once; fixture-repo.ts limits how many harness processes run together.
const concurrency = true;
const IMPORT_TYPE = "import type { Registered } from '../runtime/executor.js';\n";

const route = (body: string, params = 'capability: Registered, input: unknown') =>
  `export function route(${params}): unknown {\n  ${body}\n}\n`;

const show = (result: RunResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

/** Writes `text` as src/http/server.ts of a fresh clone and runs the harness against HEAD. */
async function runWith(text: string, path = 'src/http/server.ts'): Promise<RunResult> {
  const repo = await cloneTemplate();
  repo.write(path, text);
  return repo.run('--base', 'HEAD');
}

function assertSite(result: RunResult, file: string, line: number, description: string): void {
  assert.equal(result.code, 1, show(result));
  assert.match(result.stdout, /UNAPPROVED sites \(review required\)/);
  assert.ok(result.stdout.includes(`${file}:${line}  ${description}`), show(result));
}

describe('quality harness', { concurrency }, () => {
  describe('report and exit codes', { concurrency }, () => {
    it('exits 0 on an unchanged clone whose baseline lists every site, sections in order', async () => {
      const repo = await cloneTemplate();
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
      const headings = [
        '1. Direct dependencies',
        '2. Lockfile',
        '3. Growth',
        '4. Verification controls',
        '5. Governance',
        'Result: clean (exit 0)',
      ].map((heading) => result.stdout.indexOf(heading));
      assert.ok(
        headings.every((at, index) => at >= 0 && (index === 0 || at > (headings[index - 1] ?? 0))),
        result.stdout,
      );
      assert.match(result.stdout, /approved sites: 4/);
      assert.match(result.stdout, /LEGACY_BYPASS {2}src\/http\/routes\.ts:8 {2}reflect-apply/);
      assert.equal(result.stderr, '');
    });

    it('shows an anonymous route handler by its route, anchored to the enclosing function', async () => {
      const repo = await cloneTemplate();
      const result = await repo.run('--base', 'HEAD', '--json');
      assert.equal(result.code, 0, show(result));
      const report = JSON.parse(result.stdout) as {
        exitCode: number;
        governance: {
          approved: { anchor: string; classification: string; line: number; scope: string }[];
        };
      };
      assert.equal(report.exitCode, 0);
      const legacy = report.governance.approved.find((site) => site.anchor === ANCHORS.legacy);
      assert.equal(legacy?.classification, 'LEGACY_BYPASS');
      assert.equal(legacy?.line, 8);
      assert.equal(legacy?.scope, 'registerRoutes > app.post("/legacy/run")@1');
      assert.deepEqual(
        report.governance.approved.map((site) => site.anchor).sort(),
        Object.values(ANCHORS).sort(),
      );
    });

    it('reports dependency, lockfile and growth changes as information only (exit 0)', async () => {
      const repo = await cloneTemplate();
      const pkg = {
        ...PACKAGE_JSON,
        dependencies: { chalk: '^5.0.0' },
        devDependencies: { typescript: '~5.8' },
        peerDependencies: { react: '>=18' },
      };
      repo.write('package.json', `${JSON.stringify(pkg, null, 2)}\n`);
      repo.write('package-lock.json', '{ "lockfileVersion": 3, "packages": {} }\n');
      repo.write(
        'src/util.ts',
        'export const double = (n: number): number => n + n;\nexport const one = 1;\n',
      );
      repo.write('src/extra.ts', 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n');
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
      for (const expected of [
        '+ chalk ^5.0.0',
        '- left-pad ^1.3.0',
        '~ typescript ~5.9 -> ~5.8',
        '+ react >=18',
        'optionalDependencies: no change',
        'package-lock.json: changed',
        'src/util.ts  +2 -1  (modified)',
        'src/extra.ts  +3 -0  (added)',
        'src/  +5 -1',
        'total  +5 -1',
      ]) {
        assert.ok(result.stdout.includes(expected), `${expected}\n${show(result)}`);
      }
    });

    it('prints usage with --help (exit 0)', async () => {
      const repo = await cloneTemplate();
      const result = await repo.runCli('--help');
      assert.equal(result.code, 0);
      assert.match(result.stdout, /Usage: npm run quality -- --base <commit>/);
    });

    it('treats a file deleted from disk but still in the index as removed', async () => {
      const repo = await cloneTemplate();
      repo.remove('src/util.ts');
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
      assert.ok(result.stdout.includes('src/util.ts  +0 -1  (removed)'), show(result));
    });
  });

  describe('verification controls', { concurrency }, () => {
    const controls: {
      name: string;
      edit: (pkg: typeof PACKAGE_JSON) => unknown;
      expect: string;
    }[] = [
      {
        name: 'a changed script',
        edit: (pkg) => ({ ...pkg, scripts: { test: 'echo skipped' } }),
        expect: 'package.json scripts.test: modified',
      },
      {
        name: 'an added script',
        edit: (pkg) => ({ ...pkg, scripts: { ...pkg.scripts, pretest: 'true' } }),
        expect: 'package.json scripts.pretest: added',
      },
      {
        name: 'changed exports',
        edit: (pkg) => ({ ...pkg, exports: { '.': './dist/other.js' } }),
        expect: 'package.json exports: modified',
      },
      {
        name: 'a changed main',
        edit: (pkg) => ({ ...pkg, main: './dist/other.js' }),
        expect: 'package.json main: modified',
      },
      {
        name: 'an added bin',
        edit: (pkg) => ({ ...pkg, bin: { fixture: './cli.js' } }),
        expect: 'package.json bin: added',
      },
      {
        name: 'a removed type',
        edit: ({ type: _type, ...pkg }) => pkg,
        expect: 'package.json type: removed',
      },
    ];
    for (const control of controls) {
      it(`requires review for ${control.name} in package.json (exit 1)`, async () => {
        const repo = await cloneTemplate();
        repo.write('package.json', JSON.stringify(control.edit(PACKAGE_JSON), null, 2));
        // The first one as the command, which must exit 1 itself.
        const run = control === controls[0] ? repo.runCli : repo.run;
        const result = await run.call(repo, '--base', 'HEAD');
        assert.equal(result.code, 1, show(result));
        assert.ok(result.stdout.includes(control.expect), show(result));
        assert.match(result.stdout, /REVIEW REQUIRED \(exit 1\): 1 verification-control change/);
      });
    }

    const files: { path: string; text: string | undefined; expect: string }[] = [
      { path: 'tsconfig.json', text: '{ "compilerOptions": {} }\n', expect: 'modified' },
      { path: 'packages/app/tsconfig.build.json', text: '{}\n', expect: 'added' },
      { path: '.ci/run', text: '#!/bin/sh\ntrue\n', expect: 'modified' },
      { path: '.ci/nightly', text: 'echo\n', expect: 'added' },
      { path: 'test/util.test.ts', text: undefined, expect: 'removed' },
      { path: 'test/new.test.ts', text: '// new\n', expect: 'added' },
      { path: 'src/index.ts', text: "export * from './util.js';\n", expect: 'modified' },
      { path: 'tools/quality/extra.ts', text: 'export {};\n', expect: 'added' },
    ];
    for (const file of files) {
      it(`requires review when ${file.path} is ${file.expect} (exit 1)`, async () => {
        const repo = await cloneTemplate();
        if (file.text === undefined) repo.remove(file.path);
        else repo.write(file.path, file.text);
        const result = await repo.run('--base', 'HEAD');
        assert.equal(result.code, 1, show(result));
        assert.ok(result.stdout.includes(`${file.path}: ${file.expect}`), show(result));
      });
    }

    it('does not treat other files (src, README) as controls (exit 0)', async () => {
      const repo = await cloneTemplate();
      repo.write('README.md', '# changed\n');
      repo.write('src/more.ts', 'export const more = true;\n');
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
      assert.match(result.stdout, /4\. Verification controls\n {2}no change/);
    });
  });

  describe(
    'quality harness: governance detection forms (each exit 1, file:line named)',
    {
      concurrency,
    },
    () => {
      const forms: { name: string; text: string; needle: string; site: string }[] = [
        {
          name: 'direct call x.execute(...)',
          text: IMPORT_TYPE + route('return capability.execute(input);'),
          needle: 'capability.execute(input)',
          site: 'call capability.execute',
        },
        {
          name: 'optional call x.execute?.(...)',
          text: IMPORT_TYPE + route('return capability.execute?.(input);'),
          needle: 'execute?.(input)',
          site: 'call capability.execute',
        },
        {
          name: 'optional chain x?.execute(...)',
          text:
            IMPORT_TYPE +
            route('return maybe?.execute(input);', 'maybe: Registered, input: unknown'),
          needle: 'maybe?.execute',
          site: 'call maybe?.execute',
        },
        {
          name: "computed string key x['execute'](...)",
          text: IMPORT_TYPE + route("return capability['execute'](input);"),
          needle: "['execute']",
          site: 'call capability["execute"]',
        },
        {
          name: 'template literal key x[`execute`](...)',
          text: IMPORT_TYPE + route('return capability[`execute`](input);'),
          needle: '[`execute`]',
          site: 'call capability["execute"]',
        },
        {
          name: 'a constant key const K = "execute"; x[K](...)',
          text: `${IMPORT_TYPE}const KEY = 'exec' + 'ute';\n${route('return capability[KEY](input);')}`,
          needle: 'capability[KEY]',
          site: 'call capability["execute"]',
        },
        {
          name: 'alias const f = x.execute',
          text: IMPORT_TYPE + route('const run = capability.execute;\n  return run(input);'),
          needle: 'const run',
          site: 'alias run=capability.execute',
        },
        {
          name: 'a call through an alias f()',
          text: IMPORT_TYPE + route('const run = capability.execute;\n  return run(input);'),
          needle: 'run(input)',
          site: 'call run',
        },
        {
          name: 'destructuring const { execute } = x',
          text: IMPORT_TYPE + route('const { execute } = capability;\n  return execute(input);'),
          needle: 'const { execute }',
          site: 'destructure {execute}=capability',
        },
        {
          name: 'renaming destructuring const { execute: run } = x',
          text: IMPORT_TYPE + route('const { execute: run } = capability;\n  return run(input);'),
          needle: 'const { execute: run }',
          site: 'destructure {execute:run}=capability',
        },
        {
          name: 'parameter destructuring ({ execute }) => ...',
          text:
            IMPORT_TYPE +
            route('return execute(input);', '{ execute }: Registered, input: unknown'),
          needle: 'export function route',
          site: 'destructure {execute}=<parameter 0>',
        },
        {
          name: 'x.execute.call(...)',
          text: IMPORT_TYPE + route('return capability.execute.call(capability.target, input);'),
          needle: 'execute.call',
          site: 'indirect-call capability.execute.call',
        },
        {
          name: 'x.execute.apply(...)',
          text: IMPORT_TYPE + route('return capability.execute.apply(capability.target, [input]);'),
          needle: 'execute.apply',
          site: 'indirect-call capability.execute.apply',
        },
        {
          name: 'x.execute.bind(...)',
          text:
            IMPORT_TYPE +
            route(
              'const bound = capability.execute.bind(capability.target);\n  return bound(input);',
            ),
          needle: 'execute.bind',
          site: 'indirect-call capability.execute.bind',
        },
        {
          name: 'Reflect.apply(x.execute, ...)',
          text:
            IMPORT_TYPE +
            route('return Reflect.apply(capability.execute, capability.target, [input]);'),
          needle: 'Reflect.apply',
          site: 'reflect-apply capability.execute',
        },
        {
          name: "Reflect.get(x, 'execute')",
          text: IMPORT_TYPE + route("return Reflect.get(capability, 'execute')(input);"),
          needle: 'Reflect.get',
          site: 'call Reflect.get(capability,"execute")',
        },
        {
          name: 'a call of the imported executeAdmittedPlan',
          text:
            "import { executeAdmittedPlan, type Registered } from '../runtime/executor.js';\n" +
            route('return executeAdmittedPlan([capability]);'),
          needle: 'return executeAdmittedPlan',
          site: 'call executeAdmittedPlan',
        },
        {
          name: 'a call of runStep imported under another name',
          text:
            `${IMPORT_TYPE}import { runStep as step } from '../runtime/executor.js';\n` +
            route('return step(capability, input);'),
          needle: 'return step(',
          site: 'call step',
        },
        {
          name: 'a call of runStep through a namespace import',
          text:
            `${IMPORT_TYPE}import * as executor from '../runtime/executor.js';\n` +
            route('return executor.runStep(capability, input);'),
          needle: 'executor.runStep(',
          site: 'call executor.runStep',
        },
        {
          name: 'x.execute handed on for a later call',
          text: IMPORT_TYPE + route('return setTimeout(capability.execute, 0, input);'),
          needle: 'setTimeout',
          site: 'extract capability.execute',
        },
      ];
      for (const form of forms) {
        it(`detects ${form.name}`, async () => {
          const result = await runWith(form.text);
          assertSite(result, 'src/http/server.ts', lineOf(form.text, form.needle), form.site);
        });
      }

      it('does not report definitions, executePlan, typeof checks or next() (exit 0)', async () => {
        const text = `${IMPORT_TYPE}
export const definition = {
  name: 'x',
  execute(input: unknown) {
    return input;
  },
  nested: { execute: (input: unknown) => input },
};

export class Middleware {
  execute(input: unknown, next: () => unknown): unknown {
    return input === undefined ? next() : input;
  }
}

export function check(capability: Registered, runtime: { executePlan(p: unknown): unknown }) {
  if (typeof capability.execute !== 'function') throw new Error('no');
  const handlers = [() => 1];
  handlers[0]?.();
  return runtime.executePlan({ steps: [] });
}
`;
        const result = await runWith(text);
        assert.equal(result.code, 0, show(result));
      });
    },
  );

  describe('anchors and the baseline', { concurrency }, () => {
    it('keeps an approved site approved when it is reformatted and commented (exit 0)', async () => {
      const repo = await cloneTemplate();
      repo.write(
        'src/runtime/executor.ts',
        `// A new header comment shifts every line.

${EXECUTOR_TS.replace(
  '  return Reflect.apply(capability.execute, capability.target, [input]);',
  `  // The one governed call.
  return Reflect.apply(
    /* captured at registration */ (capability
      .execute as (input: unknown) => unknown),
    capability.target,
    [input],
  );`,
)}`,
      );
      repo.write('src/http/routes.ts', ROUTES_TS.replace("'/legacy/run'", '"/legacy/run"'));
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
      assert.match(
        result.stdout,
        /GOVERNED_MACHINERY {2}src\/runtime\/executor\.ts:11 {2}reflect-apply/,
      );
    });

    it('keeps a site approved when it moves into a closure or callback of its function (exit 0)', async () => {
      const repo = await cloneTemplate();
      repo.write(
        'src/runtime/executor.ts',
        EXECUTOR_TS.replace(
          '  return Reflect.apply(capability.execute, capability.target, [input]);',
          `  const invoke = () => Reflect.apply(capability.execute, capability.target, [input]);
  return Promise.resolve().then(() => invoke());`,
        ),
      );
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
      assert.match(result.stdout, /reflect-apply capability\.execute {2}\(in runStep > invoke\)/);
    });

    it('treats one more identical site in an approved function as new (exit 1)', async () => {
      const repo = await cloneTemplate();
      const text = EXECUTOR_TS.replace(
        '  return Reflect.apply(capability.execute, capability.target, [input]);',
        `  if (input === null) return Reflect.apply(capability.execute, capability.target, [input]);
  return Promise.resolve().then(() => Reflect.apply(capability.execute, capability.target, [input]));`,
      );
      repo.write('src/runtime/executor.ts', text);
      const result = await repo.run('--base', 'HEAD');
      assertSite(
        result,
        'src/runtime/executor.ts',
        lineOf(text, 'Promise.resolve().then'),
        'reflect-apply capability.execute',
      );
      assert.ok(
        result.stdout.includes(
          'anchor: src/runtime/executor.ts#runStep#reflect-apply#capability.execute#1',
        ),
        show(result),
      );
    });

    it('does not carry an allowance over to another function (exit 1)', async () => {
      const repo = await cloneTemplate();
      const text = EXECUTOR_TS.replace(
        '  return Reflect.apply(capability.execute, capability.target, [input]);',
        '  return invoke(capability, input);',
      ).concat(
        '\nfunction invoke(capability: Registered, input: unknown): unknown {\n' +
          '  return Reflect.apply(capability.execute, capability.target, [input]);\n}\n',
      );
      repo.write('src/runtime/executor.ts', text);
      const result = await repo.run('--base', 'HEAD');
      assertSite(
        result,
        'src/runtime/executor.ts',
        lineOf(text, 'function invoke') + 1,
        'reflect-apply',
      );
      assert.ok(
        result.stdout.includes('src/runtime/executor.ts#invoke#reflect-apply'),
        show(result),
      );
      assert.ok(result.stdout.includes(ANCHORS.runStep), 'the old allowance is stale');
    });

    it('does not carry an allowance over to another file (exit 1)', async () => {
      const repo = await cloneTemplate();
      repo.remove('src/http/routes.ts');
      repo.write('src/http/legacy.ts', ROUTES_TS);
      const result = await repo.run('--base', 'HEAD');
      assertSite(result, 'src/http/legacy.ts', 8, 'reflect-apply registered.execute');
    });

    it('refuses self-approval: a new site plus its baseline entry in the working tree (exit 1)', async () => {
      const repo = await cloneTemplate();
      const text = IMPORT_TYPE + route('return capability.execute(input);');
      const anchor = 'src/http/server.ts#route#call#capability.execute#0';
      repo.write('src/http/server.ts', text);
      const entry = { anchor, classification: 'GOVERNED_MACHINERY', reason: 'trust me' };
      repo.write(BASELINE_PATH, baselineText([...BASELINE_SITES, entry]));
      const result = await repo.run('--base', 'HEAD');
      assertSite(result, 'src/http/server.ts', 3, 'call capability.execute');
      assert.ok(result.stdout.includes(`anchor: ${anchor}`), show(result));
      assert.ok(result.stdout.includes(`${BASELINE_PATH}: modified`), show(result));

      // Once the entry is committed (and reviewed), it is the trusted base of the next comparison.
      await repo.commit('approve the new site');
      const next = await repo.run('--base', 'HEAD');
      assert.equal(next.code, 0, show(next));
    });

    it('lists stale allowances as information (exit 0)', async () => {
      const repo = await cloneTemplate();
      repo.write('src/http/routes.ts', 'export function registerRoutes(): void {}\n');
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
      assert.match(result.stdout, /stale allowances \(informational, no site matches\): 1/);
      assert.ok(result.stdout.includes(`LEGACY_BYPASS  ${ANCHORS.legacy}`), show(result));
    });

    it('requires review when the base commit has no baseline: initial adoption (exit 1)', async () => {
      const repo = await cloneTemplate();
      repo.remove(BASELINE_PATH);
      await repo.commit('no baseline');
      repo.write(BASELINE_PATH, baselineText(BASELINE_SITES));
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 1, show(result));
      assert.match(result.stdout, /initial adoption/);
      assert.match(result.stdout, /UNAPPROVED sites \(review required\): 4/);
      assert.match(result.stdout, /working-tree baseline would approve 4 of 4 site/);
    });

    it('scans untracked files git does not ignore (exit 1)', async () => {
      const text = IMPORT_TYPE + route('return capability.execute(input);');
      const result = await runWith(text, 'src/http/untracked.ts');
      assertSite(result, 'src/http/untracked.ts', 3, 'call capability.execute');
    });

    it('skips files git ignores (exit 0)', async () => {
      const text = IMPORT_TYPE + route('return capability.execute(input);');
      const result = await runWith(text, 'src/ignored/local.ts');
      assert.equal(result.code, 0, show(result));
    });

    it('accepts a dynamic access once the base baseline lists it (exit 0)', async () => {
      const repo = await cloneTemplate();
      repo.write(
        'src/http/server.ts',
        IMPORT_TYPE +
          route('return capability[key](input);', 'capability: any, key: string, input: unknown'),
      );
      const entry = {
        anchor: 'src/http/server.ts#route#dynamic#capability[key]#0',
        classification: 'NOT_A_CAPABILITY',
        reason: 'key is always "status"',
      };
      repo.write(BASELINE_PATH, baselineText([...BASELINE_SITES, entry]));
      await repo.commit('dynamic site, reviewed');
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 0, show(result));
    });
  });

  describe('failures (exit 2, reason on stderr)', { concurrency }, () => {
    const badArguments: { name: string; args: string[]; message: RegExp }[] = [
      { name: 'no arguments', args: [], message: /--base <commit> is required/ },
      {
        name: 'an unknown flag',
        args: ['--base', 'HEAD', '--bogus'],
        message: /unknown option --bogus/,
      },
      { name: '--base without a value', args: ['--base'], message: /--base needs a commit/ },
      { name: 'a stray argument', args: ['HEAD'], message: /unexpected argument/ },
      {
        name: 'a base that is no revision',
        args: ['--base', 'no-such-ref'],
        message: /does not name a commit/,
      },
      {
        name: 'a base that is a tree',
        args: ['--base', 'HEAD^{tree}'],
        message: /does not name a commit/,
      },
    ];
    for (const bad of badArguments) {
      it(`fails on ${bad.name}`, async () => {
        const repo = await cloneTemplate();
        const result = await repo.run(...bad.args);
        assert.equal(result.code, 2, show(result));
        assert.match(result.stderr, bad.message);
      });
    }

    it('fails in a repository with no commit', async () => {
      const repo = await emptyRepo();
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 2, show(result));
      assert.match(result.stderr, /does not name a commit/);
    });

    it('fails on a malformed package.json', async () => {
      const repo = await cloneTemplate();
      repo.write('package.json', '{ "name": "fixture", }\n');
      const result = await repo.run('--base', 'HEAD');
      assert.equal(result.code, 2, show(result));
      assert.match(result.stderr, /package\.json in the working tree is not valid JSON/);
    });

    it('fails on a TypeScript syntax error, naming file and line (the command, exit 2)', async () => {
      const text = `${IMPORT_TYPE}\nexport function broken( {\n  return 1;\n}\n`;
      const repo = await cloneTemplate();
      repo.write('src/http/server.ts', text);
      const result = await repo.runCli('--base', 'HEAD');
      assert.equal(result.code, 2, show(result));
      assert.match(result.stderr, /src\/http\/server\.ts:\d+:\d+: syntax error/);
    });

    it('fails on a dynamic access the analyser cannot judge, naming file and line', async () => {
      const text =
        IMPORT_TYPE +
        route('return capability[key](input);', 'capability: any, key: string, input: unknown');
      const result = await runWith(text);
      assert.equal(result.code, 2, show(result));
      assert.match(
        result.stderr,
        /src\/http\/server\.ts:3:\d+: dynamic access the analyser cannot judge: capability\[key\]/,
      );
    });

    it('does not trust a constant key whose name a parameter shadows', async () => {
      const text = `${IMPORT_TYPE}const key = 'status';\n${route(
        'return capability[key](input);',
        'capability: any, key: string, input: unknown',
      )}`;
      const result = await runWith(text);
      assert.equal(result.code, 2, show(result));
      assert.match(result.stderr, /src\/http\/server\.ts:4:\d+: dynamic access/);
    });

    it('fails on Reflect.get with a key it cannot evaluate', async () => {
      const text =
        IMPORT_TYPE +
        route(
          'const run = Reflect.get(capability, key);\n  return run(input);',
          'capability: object, key: string, input: unknown',
        );
      const result = await runWith(text);
      assert.equal(result.code, 2, show(result));
      assert.match(result.stderr, /src\/http\/server\.ts:3:\d+: dynamic access/);
    });

    const malformed: { name: string; text: string }[] = [
      { name: 'not JSON', text: '{ "version": 1, ' },
      { name: 'a wrong version', text: baselineText(BASELINE_SITES, 2) },
      {
        name: 'an unknown classification',
        text: baselineText([{ anchor: 'a#b', classification: 'FINE', reason: 'x' }]),
      },
      {
        name: 'an empty reason',
        text: baselineText([{ anchor: 'a#b', classification: 'LEGACY_BYPASS', reason: ' ' }]),
      },
    ];
    for (const bad of malformed) {
      it(`fails when the base commit's baseline has ${bad.name}`, async () => {
        const repo = await cloneTemplate();
        repo.write(BASELINE_PATH, bad.text);
        await repo.commit('bad baseline');
        const result = await repo.run('--base', 'HEAD');
        assert.equal(result.code, 2, show(result));
        assert.match(
          result.stderr,
          /governance-baseline\.json at [0-9a-f]{12} is (malformed|not valid JSON)/,
        );
      });
    }
  });

  describe('line counts', () => {
    it('counts a minimal line diff', () => {
      assert.deepEqual(lineDiff('', ''), { added: 0, removed: 0 });
      assert.deepEqual(lineDiff('a\nb\nc\n', 'a\nb\nc\n'), { added: 0, removed: 0 });
      assert.deepEqual(lineDiff('', 'a\nb\n'), { added: 2, removed: 0 });
      assert.deepEqual(lineDiff('a\nb\nc\n', 'a\nc\n'), { added: 0, removed: 1 });
      assert.deepEqual(lineDiff('a\nb\nc\nd\n', 'a\nx\nc\ny\nd\n'), { added: 2, removed: 1 });
      assert.deepEqual(lineDiff('a\nb\n', 'b\na\n'), { added: 1, removed: 1 });
    });
  });

  describe("this repository's governance baseline", () => {
    const text = readFileSync(new URL(`../../${BASELINE_PATH}`, import.meta.url), 'utf8');
    const baseline = parseBaseline(text, BASELINE_PATH);

    it('parses, with a known classification and a reason for every entry', () => {
      assert.ok(baseline.sites.length > 0);
      for (const site of baseline.sites) {
        assert.ok(CLASSIFICATIONS.includes(site.classification), site.anchor);
        assert.ok(site.reason.trim().length > 20, `${site.anchor}: give a real reason`);
      }
    });

    // The gate CI runs (.ci/run: npm run quality -- --base HEAD), on a copy of this very tree.
    it('passes the gate on a copy of this tree, and fails it naming a file that adds a direct execute call', async () => {
      const repo = await copyOfThisTree();
      const clean = await repo.run('--base', 'HEAD');
      assert.equal(clean.code, 0, show(clean));
      assert.match(clean.stdout, /Result: clean \(exit 0\)/);

      const text =
        "import type { Capability } from '../capabilities/capability.js';\n\n" +
        'export function bypass(capability: Capability, input: unknown): Promise<unknown> {\n' +
        '  return capability.execute(input, {} as never);\n}\n';
      repo.write('src/http/bypass.ts', text);
      const result = await repo.run('--base', 'HEAD');
      assertSite(result, 'src/http/bypass.ts', 4, 'call capability.execute');
      assert.match(result.stdout, /Result: REVIEW REQUIRED \(exit 1\): 1 unapproved/);
    });

    it('lists exactly the two legacy routes as LEGACY_BYPASS', () => {
      const bypasses = baseline.sites.filter((site) => site.classification === 'LEGACY_BYPASS');
      assert.deepEqual(
        bypasses.map((site) => site.anchor).sort(),
        [0, 1].map(
          (ordinal) =>
            `src/http/legacy-routes.ts#registerLegacyRoutes#reflect-apply#registered.execute#${ordinal}`,
        ),
      );
    });
  });
});
