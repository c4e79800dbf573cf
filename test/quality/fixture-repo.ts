// Throwaway git repositories for the quality harness tests. One template repository is built
// per test process; every test clones it, edits the clone and runs the harness in it: in this
// process (runHarness, as most tests do) or as the command a user runs (a child process).
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runHarness } from '../../tools/quality/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = join(ROOT, 'tools/quality/main.ts');
const TSX = import.meta.resolve('tsx');

/** Git and the harness see neither the user's nor the system's git configuration. */
const ENV = {
  // No GIT_DIR, GIT_INDEX_FILE...: the suite may itself run from a git hook.
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_'))),
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  // tsx reads the tsconfig of the working directory; the fixtures' own may be broken on purpose.
  TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'),
};

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function exec(file: string, args: readonly string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd, env: ENV, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(error);
          return;
        }
        resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
      },
    );
  });
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await exec('git', args, cwd);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** Lines are 1-based: the first line of `text` that contains `needle`. */
export function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`${JSON.stringify(needle)} not found`);
  return index + 1;
}

export const EXECUTOR_TS = `export interface Registered {
  readonly target: object;
  readonly execute: (input: unknown) => unknown;
}

async function runStep(capability: Registered, input: unknown): Promise<unknown> {
  return Reflect.apply(capability.execute, capability.target, [input]);
}

export async function executeAdmittedPlan(steps: readonly Registered[]): Promise<unknown[]> {
  const results: unknown[] = [];
  for (const step of steps) results.push(await runStep(step, {}));
  return results;
}
`;

export const ROUTES_TS = `import type { Registered } from '../runtime/executor.js';

interface App {
  post(path: string, handler: (body: unknown) => unknown): void;
}

export function registerRoutes(app: App, registered: Registered): void {
  app.post('/legacy/run', (body) => Reflect.apply(registered.execute, registered.target, [body]));
}
`;

export const PACKAGE_JSON = {
  name: 'fixture',
  version: '1.0.0',
  type: 'module',
  main: './dist/index.js',
  exports: { '.': './dist/index.js' },
  scripts: { test: 'node --test' },
  dependencies: { 'left-pad': '^1.3.0' },
  devDependencies: { typescript: '~5.9' },
};

export const ANCHORS = {
  runStep: 'src/runtime/executor.ts#runStep#reflect-apply#capability.execute#0',
  executor: 'src/runtime/executor.ts#executeAdmittedPlan#call#runStep#0',
  runtime: 'src/runtime/runtime.ts#class Runtime > executePlan#call#executeAdmittedPlan#0',
  legacy: 'src/http/routes.ts#registerRoutes#reflect-apply#registered.execute#0',
} as const;

export interface BaselineSite {
  anchor: string;
  classification: string;
  reason: string;
}

export const BASELINE_SITES: BaselineSite[] = [
  { anchor: ANCHORS.runStep, classification: 'GOVERNED_MACHINERY', reason: 'the executor' },
  { anchor: ANCHORS.executor, classification: 'GOVERNED_MACHINERY', reason: 'runs each step' },
  { anchor: ANCHORS.runtime, classification: 'GOVERNED_MACHINERY', reason: 'the public entry' },
  { anchor: ANCHORS.legacy, classification: 'LEGACY_BYPASS', reason: 'documented legacy route' },
];

export const baselineText = (sites: readonly unknown[], version: unknown = 1) =>
  `${JSON.stringify({ version, sites }, null, 2)}\n`;

const TEMPLATE_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify(PACKAGE_JSON, null, 2)}\n`,
  'package-lock.json': '{ "lockfileVersion": 3 }\n',
  'tsconfig.json': '{ "compilerOptions": { "strict": true } }\n',
  '.gitignore': 'ignored/\n*.log\n',
  '.ci/run': '#!/bin/sh\nnpm test\n',
  'README.md': '# fixture\n',
  'src/index.ts': "export { Runtime } from './runtime/runtime.js';\n",
  'src/runtime/executor.ts': EXECUTOR_TS,
  'src/runtime/runtime.ts': `import { executeAdmittedPlan, type Registered } from './executor.js';

export class Runtime {
  async executePlan(steps: readonly Registered[]): Promise<unknown[]> {
    return executeAdmittedPlan(steps);
  }
}
`,
  'src/http/routes.ts': ROUTES_TS,
  'src/util.ts': 'export const double = (n: number): number => n * 2;\n',
  'test/util.test.ts': '// a placeholder test\n',
  'tools/quality/governance-baseline.json': baselineText(BASELINE_SITES),
};

/** Test suites may run all their tests at once; the harness processes queue here. */
class Slots {
  readonly #waiting: (() => void)[] = [];
  #free: number;

  constructor(size: number) {
    this.#free = size;
  }

  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free += 1;
    else next();
  }
}

const slots = new Slots(availableParallelism() + 1);

export class Repo {
  constructor(readonly dir: string) {}

  write(path: string, text: string): void {
    mkdirSync(dirname(join(this.dir, path)), { recursive: true });
    writeFileSync(join(this.dir, path), text);
  }

  read(path: string): string {
    return readFileSync(join(this.dir, path), 'utf8');
  }

  remove(path: string): void {
    rmSync(join(this.dir, path), { force: true });
  }

  git(...args: string[]): Promise<string> {
    return git(this.dir, ...args);
  }

  async commit(message = 'change'): Promise<void> {
    await this.git('add', '-A');
    await this.git('commit', '-q', '--allow-empty', '-m', message);
  }

  /** Runs the harness in this repository, in this process, git seeing ENV. */
  run(...args: string[]): Promise<RunResult> {
    return runHarness(args, { cwd: this.dir, env: ENV });
  }

  /**
   * Runs `node --import tsx tools/quality/main.ts` in this repository, as `npm run quality` does
   * (at most one such process per CPU at a time): the command-line wiring around runHarness.
   */
  async runCli(...args: string[]): Promise<RunResult> {
    await slots.acquire();
    try {
      return await exec(process.execPath, ['--import', TSX, MAIN, ...args], this.dir);
    } finally {
      slots.release();
    }
  }
}

let workspace: string | undefined;
let template: Promise<string> | undefined;
let clones = 0;

function workspaceDir(): string {
  workspace ??= mkdtempSync(join(tmpdir(), 'warrant-quality-'));
  return workspace;
}

async function initRepository(dir: string): Promise<void> {
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'config', 'user.email', 'quality@example.test');
  await git(dir, 'config', 'user.name', 'Quality Test');
  await git(dir, 'config', 'commit.gpgsign', 'false');
}

async function buildTemplate(): Promise<string> {
  const dir = join(workspaceDir(), 'template');
  mkdirSync(dir);
  await initRepository(dir);
  const repo = new Repo(dir);
  for (const [path, text] of Object.entries(TEMPLATE_FILES)) repo.write(path, text);
  await repo.commit('template');
  return dir;
}

/** A fresh clone of the template (baseline committed, clean working tree). */
export async function cloneTemplate(): Promise<Repo> {
  template ??= buildTemplate();
  const source = await template;
  clones += 1;
  const dir = join(workspaceDir(), `clone-${clones}`);
  await git(workspaceDir(), 'clone', '-q', source, dir);
  await git(dir, 'config', 'user.email', 'quality@example.test');
  await git(dir, 'config', 'user.name', 'Quality Test');
  await git(dir, 'config', 'commit.gpgsign', 'false');
  return new Repo(dir);
}

/**
 * A repository holding a copy of this checkout's files (tracked, and untracked ones git does not
 * ignore; node_modules and build output never), committed once: the gate as CI runs it.
 */
export async function copyOfThisTree(): Promise<Repo> {
  const listed = await exec(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    ROOT,
  );
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  clones += 1;
  const dir = join(workspaceDir(), `tree-${clones}`);
  mkdirSync(dir);
  for (const path of listed.stdout.split('\0')) {
    // A tracked file deleted in the working tree is not part of it.
    if (path !== '' && existsSync(join(ROOT, path))) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      copyFileSync(join(ROOT, path), join(dir, path));
    }
  }
  await initRepository(dir);
  const repo = new Repo(dir);
  await repo.commit('this tree');
  return repo;
}

/** An empty repository (no commit yet) with identity set. */
export async function emptyRepo(): Promise<Repo> {
  clones += 1;
  const dir = join(workspaceDir(), `empty-${clones}`);
  mkdirSync(dir);
  await initRepository(dir);
  return new Repo(dir);
}

export function removeWorkspace(): void {
  if (workspace !== undefined) rmSync(workspace, { recursive: true, force: true });
}
