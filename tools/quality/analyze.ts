/** Runs every check over the base commit and the working tree and decides the exit code. */
import {
  BASELINE_PATH,
  judge,
  parseBaseline,
  type ApprovedSite,
  type Baseline,
  type BaselineEntry,
} from './baseline.js';
import { fileControlChanges, packageControlChanges, type ControlChange } from './controls.js';
import {
  dependencyChanges,
  lockfileState,
  parsePackageJson,
  type DependencyReport,
  type LockfileState,
} from './dependencies.js';
import { QualityFailure } from './failure.js';
import {
  commitTree,
  repositoryRoot,
  resolveCommit,
  workingTree,
  type GitEnv,
  type Tree,
  type WorkingTree,
} from './git.js';
import { isScannedPath, scanFile, type Site, type SyntaxProblem } from './governance.js';
import { growth, type GrowthReport } from './growth.js';

export type ExitCode = 0 | 1 | 2;

export interface GovernanceReport {
  /** `trusted`: read from the base commit; `missing`: initial adoption; `malformed`: failure. */
  readonly baseline: 'trusted' | 'missing' | 'malformed';
  readonly baselineEntries: number;
  readonly scannedFiles: number;
  readonly approved: ApprovedSite[];
  readonly unapproved: Site[];
  readonly undecidable: Site[];
  readonly stale: BaselineEntry[];
  readonly syntaxProblems: SyntaxProblem[];
  readonly notes: string[];
}

export interface Report {
  readonly root: string;
  readonly base: { readonly revision: string; readonly commit: string };
  /** Undefined when a package.json could not be read. */
  readonly dependencies: DependencyReport | undefined;
  readonly lockfile: LockfileState;
  readonly growth: GrowthReport;
  readonly controls: ControlChange[];
  readonly governance: GovernanceReport;
  /** Why the run is a failure (exit 2); empty otherwise. */
  readonly failures: string[];
  /** Why a human review is required (exit 1); empty otherwise. */
  readonly reviewReasons: string[];
  readonly exitCode: ExitCode;
}

const LOCKFILE = 'package-lock.json';

function attempt<T>(failures: string[], step: () => T): T | undefined {
  try {
    return step();
  } catch (error) {
    if (!(error instanceof QualityFailure)) throw error;
    failures.push(error.message);
    return undefined;
  }
}

function governance(
  base: Tree,
  work: WorkingTree,
  commit: string,
  failures: string[],
): GovernanceReport {
  const notes: string[] = [];
  const baseText = base.read(BASELINE_PATH)?.toString('utf8');
  let trusted: Baseline | undefined;
  if (baseText !== undefined) {
    trusted = attempt(failures, () =>
      parseBaseline(baseText, `${BASELINE_PATH} at ${commit.slice(0, 12)}`),
    );
  }
  const workText = work.read(BASELINE_PATH)?.toString('utf8');
  if (workText !== baseText) {
    notes.push(
      workText === undefined
        ? `${BASELINE_PATH} is deleted in the working tree.`
        : `${BASELINE_PATH} differs from the base commit: its new entries approve nothing until committed and reviewed.`,
    );
  }
  let proposed: Baseline | undefined;
  if (workText !== undefined && workText !== baseText) {
    try {
      proposed = parseBaseline(workText, `${BASELINE_PATH} in the working tree`);
    } catch (error) {
      if (!(error instanceof QualityFailure)) throw error;
      notes.push(`${error.message} (it would fail the next run once committed).`);
    }
  }
  const files = work.paths.filter(isScannedPath);
  const sites: Site[] = [];
  const syntaxProblems: SyntaxProblem[] = [];
  for (const file of files) {
    // A symbolic link is scanned as the file it leads to (a link out of the scanned
    // directories must not hide a call); a dangling link is an unreadable input.
    const content = attempt(failures, () => work.readFollowingLinks(file));
    if (content === undefined) continue;
    const result = scanFile(file, content.toString('utf8'));
    sites.push(...result.sites);
    syntaxProblems.push(...result.problems);
  }
  for (const problem of syntaxProblems) {
    failures.push(
      `${problem.file}:${problem.line}:${problem.column}: syntax error: ${problem.message}`,
    );
  }
  const judgement = judge(sites, trusted);
  if (proposed !== undefined) {
    const preview = judge(sites, proposed);
    notes.push(
      `once committed and reviewed, the working-tree baseline would approve ${preview.approved.length} of ${sites.length} site(s), leave ${preview.unapproved.length + preview.undecidable.length} unapproved and ${preview.stale.length} stale (this run does not use it).`,
    );
  }
  for (const site of judgement.undecidable) {
    failures.push(
      `${site.file}:${site.line}:${site.column}: dynamic access the analyser cannot judge: ${site.text} (anchor ${site.anchor})`,
    );
  }
  const baseline =
    baseText === undefined ? 'missing' : trusted === undefined ? 'malformed' : 'trusted';
  return {
    baseline,
    baselineEntries: trusted?.sites.length ?? 0,
    scannedFiles: files.length,
    ...judgement,
    syntaxProblems,
    notes,
  };
}

/**
 * Compares `revision` (a commit) with the working tree of the repository containing `cwd`.
 * git runs with `env`. Throws a QualityFailure when there is nothing to compare (not a
 * repository, not a commit).
 */
export function analyze(cwd: string, revision: string, env: GitEnv): Report {
  const root = repositoryRoot(cwd, env);
  const commit = resolveCommit(root, env, revision);
  const base = commitTree(root, env, commit);
  const work = workingTree(root, env);
  const failures: string[] = [];

  base.prefetch(['package.json', LOCKFILE, BASELINE_PATH]);
  const basePackage = attempt(failures, () =>
    parsePackageJson(base.read('package.json'), `package.json at ${commit.slice(0, 12)}`),
  );
  const workPackage = attempt(failures, () =>
    parsePackageJson(work.read('package.json'), 'package.json in the working tree'),
  );
  const packagesRead = failures.length === 0;
  const dependencies = packagesRead ? dependencyChanges(basePackage, workPackage) : undefined;
  const lockfile = lockfileState(base.read(LOCKFILE), work.read(LOCKFILE));
  const growthReport = growth(base, work);
  const controls = [
    ...(packagesRead ? packageControlChanges(basePackage, workPackage) : []),
    ...fileControlChanges(base, work),
  ];
  const governanceReport = governance(base, work, commit, failures);

  const reviewReasons: string[] = [];
  if (controls.length > 0) reviewReasons.push(`${controls.length} verification-control change(s)`);
  if (governanceReport.baseline === 'missing') {
    reviewReasons.push(`no ${BASELINE_PATH} in the base commit (initial adoption)`);
  }
  if (governanceReport.unapproved.length > 0) {
    reviewReasons.push(`${governanceReport.unapproved.length} unapproved governance site(s)`);
  }
  const exitCode: ExitCode = failures.length > 0 ? 2 : reviewReasons.length > 0 ? 1 : 0;
  return {
    root,
    base: { revision, commit },
    dependencies,
    lockfile,
    growth: growthReport,
    controls,
    governance: governanceReport,
    failures,
    reviewReasons,
    exitCode,
  };
}
