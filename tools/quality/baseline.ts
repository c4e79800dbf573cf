/**
 * The governance baseline: accepted sites, each with a classification and a reason. Only the
 * copy in the base commit is trusted; a working-tree edit approves nothing until it has been
 * committed and reviewed (and then it is the base of the next comparison).
 */
import { QualityFailure } from './failure.js';
import type { Site } from './governance.js';

export const BASELINE_PATH = 'tools/quality/governance-baseline.json';

export const CLASSIFICATIONS = [
  /** Part of the one governed path (the executor and the middleware chain it runs). */
  'GOVERNED_MACHINERY',
  /** A known, documented bypass that is accepted for now. */
  'LEGACY_BYPASS',
  /** Test code or a fixture. */
  'TEST_OR_FIXTURE',
  /** Matches syntactically but does not run a capability (for example registration). */
  'NOT_A_CAPABILITY',
] as const;

export type Classification = (typeof CLASSIFICATIONS)[number];

export interface BaselineEntry {
  readonly anchor: string;
  readonly classification: Classification;
  readonly reason: string;
}

export interface Baseline {
  readonly version: 1;
  readonly sites: readonly BaselineEntry[];
}

export interface ApprovedSite extends Site {
  readonly classification: Classification;
  readonly reason: string;
}

export interface Judgement {
  readonly approved: ApprovedSite[];
  /** Sites (other than dynamic ones) the trusted baseline does not list: review required. */
  readonly unapproved: Site[];
  /** Dynamic accesses the trusted baseline does not list: the analyser cannot judge them. */
  readonly undecidable: Site[];
  /** Baseline entries matching no site any more (informational). */
  readonly stale: BaselineEntry[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isClassification = (value: unknown): value is Classification =>
  (CLASSIFICATIONS as readonly unknown[]).includes(value);

/** Parses and checks a baseline file; a QualityFailure names the first problem found. */
export function parseBaseline(text: string, where: string): Baseline {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new QualityFailure(`${where} is not valid JSON: ${message}`);
  }
  const fail = (problem: string): never => {
    throw new QualityFailure(`${where} is malformed: ${problem}`);
  };
  if (!isRecord(value)) return fail('expected an object { "version": 1, "sites": [...] }');
  const unknownKeys = Object.keys(value).filter((key) => key !== 'version' && key !== 'sites');
  if (unknownKeys.length > 0) fail(`unknown key(s) ${unknownKeys.join(', ')}`);
  if (value.version !== 1) fail(`"version" must be 1, got ${JSON.stringify(value.version)}`);
  if (!Array.isArray(value.sites)) return fail('"sites" must be an array');
  const seen = new Set<string>();
  const sites = value.sites.map((entry: unknown, index): BaselineEntry => {
    const at = `sites[${index}]`;
    if (!isRecord(entry)) return fail(`${at} must be an object`);
    const extra = Object.keys(entry).filter(
      (key) => !['anchor', 'classification', 'reason'].includes(key),
    );
    if (extra.length > 0) fail(`${at} has unknown key(s) ${extra.join(', ')}`);
    const { anchor, classification, reason } = entry;
    if (typeof anchor !== 'string' || anchor.trim() === '') {
      return fail(`${at}.anchor must be a non-empty string`);
    }
    if (seen.has(anchor)) fail(`${at}.anchor is listed twice: ${anchor}`);
    seen.add(anchor);
    if (!isClassification(classification)) {
      return fail(`${at}.classification must be one of ${CLASSIFICATIONS.join(', ')}`);
    }
    if (typeof reason !== 'string' || reason.trim() === '') {
      return fail(`${at}.reason must be a non-empty string`);
    }
    return { anchor, classification, reason };
  });
  return { version: 1, sites };
}

/** Matches the sites found against the trusted baseline (undefined: none in the base commit). */
export function judge(sites: readonly Site[], baseline: Baseline | undefined): Judgement {
  const entries = new Map((baseline?.sites ?? []).map((entry) => [entry.anchor, entry]));
  const found = new Set(sites.map((site) => site.anchor));
  const approved: ApprovedSite[] = [];
  const unapproved: Site[] = [];
  const undecidable: Site[] = [];
  for (const site of sites) {
    const entry = entries.get(site.anchor);
    if (entry !== undefined) {
      approved.push({ ...site, classification: entry.classification, reason: entry.reason });
    } else if (site.kind === 'dynamic') {
      undecidable.push(site);
    } else {
      unapproved.push(site);
    }
  }
  const stale = (baseline?.sites ?? []).filter((entry) => !found.has(entry.anchor));
  return { approved, unapproved, undecidable, stale };
}
