// Every ```sh / ```bash block of the README, CONTRIBUTING.md and the guide (docs/guide/) is
// checked against the program (issue 47 item 9), so the commands readers copy cannot drift:
//
// - every `warrant` command line (`npm run warrant -- ...`, `npx warrant ...`, `warrant ...`,
//   `node .../cli/main.js ...`) names a command of `warrant --help`, and each of its options
//   appears in that command's `--help`; every `npm run <script>` names a script of package.json;
// - every block not marked `<!-- not-run: <reason> -->` on the line before it is RUN, page by
//   page, top to bottom, by bash in a fresh directory laid out as a clone after `npm ci &&
//   npm run build` (examples/ as shipped, package.json, dist/ and node_modules/ linked), so a
//   page's blocks share its files and shell variables as a reader's shell would. Each
//   `npm run warrant -- ...` runs the built program and must exit 0, or the code its line's
//   comment names (`# exits 3: ...`); any other command that fails stops the page (`set -e`).
//
// NOT_RUN lists every marked block, so marking one is a visible change to this file. Blocks are
// marked when they start a server or a worker, or need values only the reader has (a job id, a
// URL of theirs). Run `npm run build` first.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { copyExamples } from '../support/examples-copy.js';
import { fencedBlocks, guideDocuments, headings, readText } from '../support/markdown.js';
import { REPO } from '../support/typecheck-consumer.js';

/** Blocks marked `<!-- not-run: reason -->`: document, then reason. */
const NOT_RUN: readonly (readonly [string, string])[] = [
  [
    'README.md',
    "the set-up commands themselves (npm test runs the whole suite; test/console/start-script.test.ts runs npm start's script)",
  ],
  ['README.md', 'needs the job id npm start printed'],
  [
    'CONTRIBUTING.md',
    'compares with a branch of the git history (test/quality/harness.test.ts runs the harness on repositories of its own)',
  ],
  [
    'docs/guide/http.md',
    'starts a server and talks to it (test/http/ and test/cli/ drive both over a socket)',
  ],
  ['docs/guide/http.md', 'starts a server'],
  ['docs/guide/http.md', 'starts a server'],
  [
    'docs/guide/http.md',
    "starts a server; the issuer, audience and keys stand for your identity provider's",
  ],
  [
    'docs/guide/http.md',
    'starts a server and talks to it (test/examples/scopes-authorizer.test.ts runs this example end to end)',
  ],
  ['docs/guide/http.md', 'starts a server'],
  ['docs/guide/http.md', 'starts a server'],
  ['docs/guide/mcp.md', 'the downstream server is a placeholder for one of yours'],
  [
    'docs/guide/mcp.md',
    'the downstream server is a placeholder for one of yours, and the second command serves until stopped',
  ],
  [
    'docs/guide/notifications.md',
    "starts servers; the URLs stand for your receiver's and your Slack webhook's",
  ],
  [
    'docs/guide/stores.md',
    'starts PostgreSQL, two workers and a server, each in its own terminal (test/cli/commands/worker.test.ts and test/workers/ run them)',
  ],
];

const SHELL = new Set(['sh', 'bash', 'shell']);
const BIN = join(REPO, 'dist/esm/cli/main.js');
const exec = promisify(execFile);

interface Block {
  readonly document: string;
  readonly line: number;
  readonly code: string;
  readonly notRun: string | undefined;
}

const documents = guideDocuments(REPO);
const blocks: Block[] = documents.flatMap((document) =>
  fencedBlocks(readText(REPO, document))
    .filter((block) => SHELL.has(block.language))
    .map((block) => ({
      document,
      line: block.line,
      code: block.code,
      notRun: block.marker?.name === 'not-run' ? block.marker.reason : undefined,
    })),
);

// ---- Reading shell, as far as these blocks need it ----------------------------------------

interface Token {
  readonly kind: 'word' | 'op';
  readonly value: string;
}

/** The index just past the `)` closing the `$(` whose `(` is at `open`. */
function pastSubstitution(text: string, open: number): number {
  let depth = 0;
  for (let index = open; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\\') index += 1;
    else if (char === "'") index = text.indexOf("'", index + 1);
    else if (char === '"') index = pastDoubleQuote(text, index) - 1;
    else if (char === '(') depth += 1;
    else if (char === ')' && --depth === 0) return index + 1;
    if (index < 0) break;
  }
  return text.length;
}

/** The index just past the `"` closing the one at `open`. */
function pastDoubleQuote(text: string, open: number): number {
  for (let index = open + 1; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\\') index += 1;
    else if (char === '$' && text[index + 1] === '(') index = pastSubstitution(text, index + 1) - 1;
    else if (char === '"') return index + 1;
  }
  return text.length;
}

const OPERATORS = [
  '$(',
  '&&',
  '||',
  '>>',
  '2>&1',
  '2>',
  '&>',
  '<<-',
  '<<',
  '|',
  '&',
  ';',
  '<',
  '>',
  '(',
  ')',
];

/** The words and operators of one logical command line, and its trailing comment. */
function tokenize(line: string): { tokens: Token[]; comment: string } {
  const tokens: Token[] = [];
  let word = '';
  let inWord = false;
  const flush = () => {
    if (inWord) tokens.push({ kind: 'word', value: word });
    word = '';
    inWord = false;
  };
  for (let index = 0; index < line.length;) {
    const char = line[index] as string;
    if (char === '#' && !inWord) {
      flush();
      return { tokens, comment: line.slice(index + 1).trim() };
    }
    if (/\s/.test(char)) {
      flush();
      index += 1;
      continue;
    }
    const operator = OPERATORS.find((op) => line.startsWith(op, index));
    if (operator !== undefined && !(operator === '2>' && inWord)) {
      flush();
      tokens.push({ kind: 'op', value: operator });
      index += operator.length;
      continue;
    }
    inWord = true;
    if (char === '\\') {
      word += line[index + 1] ?? '';
      index += 2;
    } else if (char === "'") {
      const end = line.indexOf("'", index + 1);
      word += line.slice(index + 1, end < 0 ? line.length : end);
      index = end < 0 ? line.length : end + 1;
    } else if (char === '"') {
      const end = pastDoubleQuote(line, index);
      word += line.slice(index + 1, end - 1);
      index = end;
    } else {
      word += char;
      index += 1;
    }
  }
  flush();
  return { tokens, comment: '' };
}

interface Command {
  /** 1-based line of the document where the command starts. */
  readonly line: number;
  readonly text: string;
  readonly words: readonly (readonly string[])[];
  /** The exit code its comment names (`# exits 3`), else 0. */
  readonly expected: number;
}

/** The logical command lines of a block (continuations joined, heredoc bodies left out). */
function commandsOf(block: { readonly line: number; readonly code: string }): Command[] {
  const lines = block.code.split('\n');
  const commands: Command[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const start = index;
    let text = lines[index] as string;
    while (text.endsWith('\\') && index + 1 < lines.length) {
      index += 1;
      text = `${text.slice(0, -1)} ${(lines[index] as string).trim()}`;
    }
    const heredoc = /<<-?\s*(['"]?)([\w-]+)\1/.exec(text);
    if (heredoc !== null)
      while (index + 1 < lines.length && (lines[index + 1] as string).trim() !== heredoc[2])
        index += 1;
    if (heredoc !== null) index += 1;
    if (text.trim() === '' || text.trim().startsWith('#')) continue;
    const { tokens, comment } = tokenize(text);
    commands.push({
      line: block.line + start,
      text: text.trim(),
      words: simpleCommands(tokens),
      expected: Number(/\bexits? (\d+)\b/.exec(comment)?.[1] ?? 0),
    });
  }
  return commands;
}

const REDIRECTS = new Set(['>>', '2>', '&>', '<<-', '<<', '<', '>']);
const KEYWORDS = new Set(['do', 'then', 'else', 'if', 'while', 'until', '!', 'time']);

/** The simple commands of a token list: their words, assignments and keywords left out. */
function simpleCommands(tokens: readonly Token[]): string[][] {
  const result: string[][] = [];
  let current: string[] = [];
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index] as Token;
    if (token.kind === 'op') {
      if (REDIRECTS.has(token.value)) index += 1;
      else if (token.value !== '2>&1') {
        if (current.length > 0) result.push(current);
        current = [];
      }
      continue;
    }
    if (current.length === 0 && (KEYWORDS.has(token.value) || /^\w+=/.test(token.value))) continue;
    current.push(token.value);
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** The arguments `warrant` gets from a simple command, or undefined when it is not one. */
function warrantArguments(words: readonly string[]): string[] | undefined {
  const [program, ...rest] = words;
  if (program === 'warrant') return rest;
  if (program === 'npx' && rest[0] === 'warrant') return rest.slice(1);
  if (program === 'npm' && rest[0] === 'run') {
    let index = 1;
    while (rest[index]?.startsWith('-')) index += 1;
    if (rest[index] !== 'warrant') return undefined;
    return rest.slice(rest[index + 1] === '--' ? index + 2 : index + 1);
  }
  if (program === 'node') {
    const main = rest.findIndex((word) => word.endsWith('/cli/main.js'));
    return main < 0 ? undefined : rest.slice(main + 1);
  }
  return undefined;
}

/** The script `npm run` names, when the simple command is an `npm run` of another script. */
function npmScript(words: readonly string[]): string | undefined {
  if (words[0] !== 'npm' || words[1] !== 'run') return undefined;
  return words.slice(2).find((word) => !word.startsWith('-'));
}

// ---- The program's own word on its commands and options -------------------------------------

/** Commands whose second word may name a sub-command (`jobs verify`, `policy validate`, ...). */
const WITH_SUBCOMMANDS = new Set(['jobs', 'approvals', 'policy', 'evidence']);

async function helpOf(command: string | undefined): Promise<string> {
  const { stdout } = await exec(
    process.execPath,
    [BIN, ...(command === undefined ? [] : [command]), '--help'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return stdout;
}

/** What is wrong with one `warrant` command line, judged by the program's `--help` texts. */
function problemsOf(args: readonly string[], helps: ReadonlyMap<string, string>): string[] {
  const [first, second] = args;
  const command = first === undefined || first.startsWith('-') ? undefined : first;
  if (command !== undefined && !helps.has(command)) return [`unknown command "${command}"`];
  const help = helps.get(command ?? '') as string;
  const problems: string[] = [];
  if (
    command !== undefined &&
    WITH_SUBCOMMANDS.has(command) &&
    second !== undefined &&
    /^[a-z]+$/.test(second) &&
    !new RegExp(`warrant ${command}\\b[^\\n]*\\b${second}\\b`).test(help)
  )
    problems.push(`"${command} ${second}" is not a sub-command of "${command}"`);
  for (const arg of args) {
    if (!arg.startsWith('--') || arg === '--') continue;
    const flag = arg.split('=')[0] as string;
    if (flag === '--help' || flag === '--version') continue;
    const escaped = flag.replace(/[-]/g, '\\-');
    if (!new RegExp(`(^|[\\s\\[(|,])${escaped}(?![\\w-])`, 'm').test(help))
      problems.push(`${flag} is not an option of "warrant ${command ?? ''}"`);
  }
  return problems;
}

// ---- Running a page -----------------------------------------------------------------------

/** Defines `npm` (`npm run warrant -- ...` runs the build, logging each exit code with the
 * line that ran it) and refuses `npx`, which would look `warrant` up in the registry. */
const PRELUDE = `set -e
__warrant() {
  local line=\${BASH_LINENO[$(( \${#BASH_LINENO[@]} - 2 ))]}
  local status=0
  node dist/esm/cli/main.js "$@" || status=$?
  printf '%s %s\\n' "$line" "$status" >> "$DOCS_SHELL_CALLS"
  return 0
}
npm() {
  if [ "$1" = run ]; then
    shift
    while [ "\${1#-}" != "$1" ]; do shift; done
    if [ "$1" = warrant ]; then
      shift
      if [ "$1" = -- ]; then shift; fi
      __warrant "$@"
      return 0
    fi
  fi
  echo "docs-shell: npm $* is not run here" >&2
  return 127
}
npx() { echo "docs-shell: npx $* is not run here" >&2; return 127; }
`;

interface PageRun {
  readonly status: number | null;
  readonly stderr: string;
  /** Document line of each `npm run warrant` call, with its exit code, in order. */
  readonly calls: readonly { line: number; status: number }[];
}

const workspaces: string[] = [];

/** A directory laid out as a fresh clone after `npm ci && npm run build`. */
function freshClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-docs-shell-'));
  workspaces.push(dir);
  copyExamples(dir);
  writeFileSync(join(dir, 'package.json'), readFileSync(join(REPO, 'package.json')));
  symlinkSync(join(REPO, 'dist'), join(dir, 'dist'));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

async function runPage(document: string, pageBlocks: readonly Block[]): Promise<PageRun> {
  const dir = freshClone();
  const lines: number[] = [];
  const script: string[] = [];
  for (const block of pageBlocks) {
    block.code.split('\n').forEach((line, offset) => {
      script.push(line);
      lines.push(block.line + offset);
    });
  }
  writeFileSync(join(dir, '.docs-shell-prelude.sh'), PRELUDE);
  writeFileSync(join(dir, '.docs-shell-page.sh'), `${script.join('\n')}\n`);
  const calls = join(dir, '.docs-shell-calls');
  writeFileSync(calls, '');
  // The reader's shell, without Warrant's own settings of this machine (a key, a token).
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('WARRANT_')),
  );
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    BASH_ENV: join(dir, '.docs-shell-prelude.sh'),
    DOCS_SHELL_CALLS: calls,
    NO_COLOR: '1',
    // Node 22 and later keep compiled code between the page's runs of the program (Node 20
    // ignores it): the same program, started faster.
    NODE_COMPILE_CACHE: join(workspaces[0] as string, '.node-compile-cache'),
  };
  // A process group of its own, so a page that hangs is stopped with every process it started.
  const child = spawn('bash', ['.docs-shell-page.sh'], { cwd: dir, env, detached: true });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.resume();
  const timer = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), 120_000);
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  const logged = readFileSync(calls, 'utf8')
    .split('\n')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [line, code] = entry.split(' ').map(Number) as [number, number];
      return { line: lines[line - 1] ?? -line, status: code };
    });
  return { status, stderr: `${document}:\n${stderr.slice(-4000)}`, calls: logged };
}

// ---- The tests ----------------------------------------------------------------------------

/** `warrant --help`, and the `--help` of each command it lists, by command ('' for the first). */
async function helpTexts(): Promise<Map<string, string>> {
  const top = await helpOf(undefined);
  const names = [...top.matchAll(/^ {2}([a-z]+)\b/gm)].map((match) => match[1] as string);
  assert.ok(names.includes('run') && names.includes('serve'), top);
  const texts = await Promise.all(names.map((name) => helpOf(name)));
  return new Map([
    ['', top],
    ...names.map((name, index) => [name, texts[index] as string] as const),
  ]);
}

/** The pages that have blocks to run, each with those blocks. */
const pages = documents
  .map((document) => ({
    document,
    blocks: blocks.filter((block) => block.document === document && block.notRun === undefined),
  }))
  .filter((page) => page.blocks.length > 0);

describe('shell blocks of the README, CONTRIBUTING.md and docs/guide/', () => {
  // Both start at once (the pages' processes and the --help ones share the machine's cores);
  // each test waits for the one it reads.
  let helpsReady: Promise<Map<string, string>>;
  let runsReady: Promise<PageRun[]>;

  before(() => {
    assert.ok(existsSync(BIN), 'dist/esm/cli/main.js is missing: run `npm run build` first');
    helpsReady = helpTexts();
    runsReady = Promise.all(pages.map((page) => runPage(page.document, page.blocks)));
    // Each is awaited by its test; a rejection is reported there, not as unhandled.
    helpsReady.catch(() => {});
    runsReady.catch(() => {});
  });
  after(async () => {
    await Promise.allSettled([helpsReady, runsReady]);
    for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
  });

  it('finds the blocks: every page of the guide has some, most are run', () => {
    for (const document of documents.filter((name) => name.startsWith('docs/guide/')))
      if (document !== 'docs/guide/README.md')
        assert.ok(
          blocks.some((block) => block.document === document),
          `no shell block in ${document}`,
        );
    assert.ok(blocks.filter((block) => block.notRun === undefined).length >= 10);
  });

  it('lists every block marked not-run, with its reason', () => {
    assert.deepEqual(
      blocks
        .filter((block) => block.notRun !== undefined)
        .map((block) => [block.document, block.notRun]),
      NOT_RUN,
    );
    for (const [, reason] of NOT_RUN) assert.notEqual(reason, '', 'a marker needs a reason');
  });

  it("keeps the README's quick start to its two set-up commands, npm start and npm test", () => {
    const readme = readText(REPO, 'README.md');
    const quickStart = headings(readme).find((heading) => heading.text === 'Quick start');
    assert.ok(quickStart !== undefined, 'the README has a Quick start');
    const first = blocks.find(
      (block) => block.document === 'README.md' && block.line > quickStart.line,
    );
    const commands = commandsOf(first as Block).map((command) =>
      command.text.split('#')[0]?.trim(),
    );
    assert.deepEqual(commands, ['npm ci && npm start', 'npm test']);
  });

  it('names only commands and options of the program, and scripts of package.json', async () => {
    const helps = await helpsReady;
    const scripts = Object.keys(
      (JSON.parse(readText(REPO, 'package.json')) as { scripts: Record<string, string> }).scripts,
    );
    const problems: string[] = [];
    let checked = 0;
    for (const block of blocks)
      for (const command of commandsOf(block))
        for (const words of command.words) {
          const where = `${block.document}:${command.line}: ${command.text}`;
          const args = warrantArguments(words);
          if (args !== undefined) {
            checked += 1;
            for (const problem of problemsOf(args, helps)) problems.push(`${where}\n  ${problem}`);
          }
          const script = npmScript(words);
          if (script !== undefined && script !== 'warrant' && !scripts.includes(script))
            problems.push(`${where}\n  no script "${script}" in package.json`);
        }
    assert.deepEqual(problems, []);
    assert.ok(checked >= 40, `only ${checked} warrant command lines found`);
  });

  it('runs each page top to bottom in a fresh clone: each command exits as its line says', async () => {
    const runs = await runsReady;
    const problems: string[] = [];
    pages.forEach((page, index) => {
      const run = runs[index] as PageRun;
      if (run.status !== 0)
        problems.push(`${page.document}: bash exited ${run.status}\n${run.stderr}`);
      for (const block of page.blocks)
        for (const command of commandsOf(block)) {
          if (!command.words.some((words) => words[0] === 'npm' && warrantArguments(words)))
            continue;
          const calls = run.calls.filter((call) => call.line === command.line);
          const where = `${page.document}:${command.line}: ${command.text}`;
          if (calls.length === 0) problems.push(`${where}\n  never ran`);
          for (const call of calls)
            if (call.status !== command.expected)
              problems.push(
                `${where}\n  exited ${call.status}, not ${command.expected}\n${run.stderr}`,
              );
        }
    });
    assert.deepEqual(problems, []);
  });
});
