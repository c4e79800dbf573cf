/** Renders a Report as plain text, sections in a fixed order. */
import type { Report } from './analyze.js';
import { BASELINE_PATH } from './baseline.js';
import { DEPENDENCY_CATEGORIES } from './dependencies.js';
import type { Site } from './governance.js';

const INDENT = '  ';

function siteLine(site: Site): string {
  return `${site.file}:${site.line}  ${site.kind} ${site.text}  (in ${site.scope})`;
}

function dependencySection(report: Report): string[] {
  const lines = ['1. Direct dependencies (informational)'];
  if (report.dependencies === undefined) {
    return [...lines, `${INDENT}not compared: a package.json could not be read (see errors)`];
  }
  for (const category of DEPENDENCY_CATEGORIES) {
    const changes = report.dependencies[category];
    if (changes.length === 0) {
      lines.push(`${INDENT}${category}: no change`);
      continue;
    }
    lines.push(`${INDENT}${category}:`);
    for (const change of changes) {
      const detail =
        change.change === 'added'
          ? `+ ${change.name} ${change.to ?? ''}`
          : change.change === 'removed'
            ? `- ${change.name} ${change.from ?? ''}`
            : `~ ${change.name} ${change.from ?? ''} -> ${change.to ?? ''}`;
      lines.push(`${INDENT}${INDENT}${detail}`);
    }
  }
  return lines;
}

function growthSection(report: Report): string[] {
  const lines = ['3. Growth (informational)'];
  for (const area of report.growth.areas) {
    lines.push(`${INDENT}${area.area}  +${area.added} -${area.removed}`);
    for (const file of area.files) {
      const counts = file.binary ? 'binary' : `+${file.added} -${file.removed}`;
      lines.push(`${INDENT}${INDENT}${file.path}  ${counts}  (${file.status})`);
    }
  }
  lines.push(`${INDENT}total  +${report.growth.added} -${report.growth.removed}`);
  return lines;
}

function controlSection(report: Report): string[] {
  const lines = ['4. Verification controls'];
  if (report.controls.length === 0) return [...lines, `${INDENT}no change`];
  lines.push(`${INDENT}REVIEW REQUIRED: ${report.controls.length} change(s)`);
  for (const control of report.controls) {
    lines.push(`${INDENT}${INDENT}${control.subject}: ${control.change}`);
  }
  return lines;
}

function governanceSection(report: Report): string[] {
  const g = report.governance;
  const lines = ['5. Governance (capability execute and executor call sites)'];
  const baseline = {
    trusted: `${BASELINE_PATH} at the base commit, ${g.baselineEntries} entr${g.baselineEntries === 1 ? 'y' : 'ies'}`,
    missing: `none in the base commit: initial adoption, REVIEW REQUIRED`,
    malformed: `${BASELINE_PATH} at the base commit is malformed (see errors)`,
  }[g.baseline];
  lines.push(`${INDENT}trusted baseline: ${baseline}`);
  lines.push(`${INDENT}files scanned: ${g.scannedFiles}`);
  for (const note of g.notes) lines.push(`${INDENT}note: ${note}`);
  lines.push(`${INDENT}approved sites: ${g.approved.length}`);
  for (const site of g.approved) {
    lines.push(`${INDENT}${INDENT}${site.classification}  ${siteLine(site)}`);
  }
  if (g.unapproved.length > 0) {
    lines.push(`${INDENT}UNAPPROVED sites (review required): ${g.unapproved.length}`);
    for (const site of g.unapproved) {
      lines.push(`${INDENT}${INDENT}${siteLine(site)}`);
      lines.push(`${INDENT}${INDENT}${INDENT}anchor: ${site.anchor}`);
    }
  }
  if (g.undecidable.length > 0) {
    lines.push(
      `${INDENT}DYNAMIC access the analyser cannot judge (failure): ${g.undecidable.length}`,
    );
    for (const site of g.undecidable) {
      lines.push(`${INDENT}${INDENT}${siteLine(site)}`);
      lines.push(`${INDENT}${INDENT}${INDENT}anchor: ${site.anchor}`);
    }
  }
  if (g.stale.length > 0) {
    lines.push(`${INDENT}stale allowances (informational, no site matches): ${g.stale.length}`);
    for (const entry of g.stale) {
      lines.push(`${INDENT}${INDENT}${entry.classification}  ${entry.anchor}`);
    }
  }
  return lines;
}

function verdict(report: Report): string {
  if (report.exitCode === 2)
    return `Result: FAILURE (exit 2): ${report.failures.length} error(s), see stderr`;
  if (report.exitCode === 1)
    return `Result: REVIEW REQUIRED (exit 1): ${report.reviewReasons.join('; ')}`;
  return 'Result: clean (exit 0)';
}

export function renderText(report: Report): string {
  const sections = [
    [
      'Quality report',
      `${INDENT}base: ${report.base.revision} (${report.base.commit})`,
      `${INDENT}compared with: the working tree of ${report.root}`,
    ],
    dependencySection(report),
    ['2. Lockfile (informational)', `${INDENT}package-lock.json: ${report.lockfile}`],
    growthSection(report),
    controlSection(report),
    governanceSection(report),
    [verdict(report)],
  ];
  return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}
