/**
 * The harness as a function: `runHarness(argv, { cwd, env })` does what
 * `npm run quality -- <argv>` does in `cwd` (CONTRIBUTING.md, "The review harness") and returns
 * its exit code and output instead of writing them. It keeps no state between runs: every run
 * reads the repository afresh, and git sees `env` (the caller's choice) rather than
 * `process.env`. main.ts is the command-line wrapper around it.
 */
import type { ExitCode, Report } from './analyze.js';
import { QualityFailure } from './failure.js';

export const USAGE = `Usage: npm run quality -- --base <commit> [--json]

Compares <commit> with the working tree (tracked files and untracked files git does not
ignore) and reports, in order: direct dependency changes, the lockfile, growth of src/, test/
and tools/quality/, verification-control changes, and governance sites (capability execute
and executor calls) against tools/quality/governance-baseline.json as committed in <commit>.

Options:
  --base <commit>   the commit to compare with (required), e.g. origin/main or HEAD
  --json            print the report as JSON instead of text
  -h, --help        print this help

Exit codes: 0 clean, 1 review required, 2 failure (never a pass; the reason is on stderr).
`;

export interface HarnessRun {
  readonly code: ExitCode;
  readonly stdout: string;
  readonly stderr: string;
}

export interface HarnessOptions {
  /** The directory the run starts in (any directory inside the repository). */
  readonly cwd: string;
  /** The environment git runs with. */
  readonly env: NodeJS.ProcessEnv;
}

interface Arguments {
  readonly base?: string;
  readonly json: boolean;
  readonly help: boolean;
}

function parseArguments(argv: readonly string[]): Arguments {
  let base: string | undefined;
  let json = false;
  let help = false;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--help' || argument === '-h') help = true;
    else if (argument === '--json') json = true;
    else if (argument === '--base' || argument.startsWith('--base=')) {
      if (base !== undefined) throw new QualityFailure('--base given more than once');
      const value = argument === '--base' ? argv[++index] : argument.slice('--base='.length);
      if (value === undefined || value === '' || value.startsWith('-')) {
        throw new QualityFailure('--base needs a commit, e.g. --base origin/main');
      }
      base = value;
    } else if (argument.startsWith('-')) {
      throw new QualityFailure(`unknown option ${argument}`);
    } else {
      throw new QualityFailure(`unexpected argument ${JSON.stringify(argument)}`);
    }
  }
  return { base, json, help };
}

const failure = (message: string): HarnessRun => ({
  code: 2,
  stdout: '',
  stderr: `quality: error: ${message}\n`,
});

/** One run of the harness; a QualityFailure (or any other fault) is exit 2, never a throw. */
export async function runHarness(
  argv: readonly string[],
  options: HarnessOptions,
): Promise<HarnessRun> {
  let args: Arguments;
  try {
    args = parseArguments(argv);
  } catch (error) {
    if (!(error instanceof QualityFailure)) throw error;
    return failure(`${error.message}\n\n${USAGE}`);
  }
  if (args.help) return { code: 0, stdout: USAGE, stderr: '' };
  if (args.base === undefined) return failure(`--base <commit> is required\n\n${USAGE}`);
  // Loaded only now: the analysis brings in the TypeScript compiler, which --help does not need.
  const { analyze } = await import('./analyze.js');
  const { renderText } = await import('./report.js');
  let report: Report;
  try {
    report = analyze(options.cwd, args.base, options.env);
  } catch (error) {
    if (!(error instanceof QualityFailure)) throw error;
    return failure(error.message);
  }
  return {
    code: report.exitCode,
    stdout: args.json ? `${JSON.stringify(report, null, 2)}\n` : renderText(report),
    stderr: report.failures.map((message) => `quality: error: ${message}\n`).join(''),
  };
}
