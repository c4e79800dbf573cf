/** Section 1 and 2 of the report: direct dependency changes and the lockfile (informational). */
import { QualityFailure } from './failure.js';

export const DEPENDENCY_CATEGORIES = [
  'dependencies',
  'devDependencies',
  'peerDependencies',
  'optionalDependencies',
] as const;

export type DependencyCategory = (typeof DEPENDENCY_CATEGORIES)[number];

export interface DependencyChange {
  readonly name: string;
  readonly change: 'added' | 'removed' | 'changed';
  readonly from?: string;
  readonly to?: string;
}

export type DependencyReport = Record<DependencyCategory, DependencyChange[]>;

export type LockfileState = 'unchanged' | 'changed' | 'added' | 'removed' | 'absent';

/** A parsed package.json: a JSON object whose dependency categories map names to strings. */
export type PackageJson = Readonly<Record<string, unknown>>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a package.json. Undefined when the file does not exist; a QualityFailure when it is not
 * a JSON object or a dependency category is not an object of version strings.
 */
export function parsePackageJson(
  content: Buffer | undefined,
  where: string,
): PackageJson | undefined {
  if (content === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new QualityFailure(`${where} is not valid JSON: ${message}`);
  }
  if (!isRecord(value)) throw new QualityFailure(`${where} is not a JSON object`);
  for (const category of DEPENDENCY_CATEGORIES) {
    const entries = value[category];
    if (entries === undefined) continue;
    if (!isRecord(entries) || !Object.values(entries).every((v) => typeof v === 'string')) {
      throw new QualityFailure(`${where}: "${category}" must be an object of version strings`);
    }
  }
  return value;
}

function entriesOf(
  pkg: PackageJson | undefined,
  category: DependencyCategory,
): Map<string, string> {
  const entries = pkg?.[category];
  return new Map(isRecord(entries) ? Object.entries(entries).map(([k, v]) => [k, String(v)]) : []);
}

/** Added, removed and re-versioned direct dependencies, per category, sorted by name. */
export function dependencyChanges(
  base: PackageJson | undefined,
  work: PackageJson | undefined,
): DependencyReport {
  const report = {} as DependencyReport;
  for (const category of DEPENDENCY_CATEGORIES) {
    const before = entriesOf(base, category);
    const after = entriesOf(work, category);
    const names = [...new Set([...before.keys(), ...after.keys()])].sort();
    report[category] = names.flatMap((name): DependencyChange[] => {
      const from = before.get(name);
      const to = after.get(name);
      if (from === undefined && to !== undefined) return [{ name, change: 'added', to }];
      if (from !== undefined && to === undefined) return [{ name, change: 'removed', from }];
      if (from !== to) return [{ name, change: 'changed', from, to }];
      return [];
    });
  }
  return report;
}

export function lockfileState(base: Buffer | undefined, work: Buffer | undefined): LockfileState {
  if (base === undefined) return work === undefined ? 'absent' : 'added';
  if (work === undefined) return 'removed';
  return base.equals(work) ? 'unchanged' : 'changed';
}
