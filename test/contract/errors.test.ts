// docs/decisions.md, "House rules": the catalog of error codes (src/errors/error-codes.ts) and
// docs/errors.md agree, both ways, row for row; and src/ spells no catalog code as a string
// outside the catalog, so every code it issues is one of the catalog (createError and issueError
// take catalog codes only, checked by tsc).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  ADMISSION_ISSUES,
  ERROR_CATALOG,
  ErrorCode,
  OUTBOUND_MCP_ERRORS,
  STEP_FAILURES,
  THROWN_ERRORS,
  type AdmissionIssueCode,
} from '../../src/errors/error-codes.js';
import type { PlanAdmissionIssue } from '../../src/plan/plan-admission-error.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CODE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
const CATALOG_FILE = 'src/errors/error-codes.ts';

// docs/api.md, "runtime.executePlan": the admission issue codes, in the order docs/api.md lists them.
const API_ISSUE_CODES = [
  'INVALID_PLAN',
  'UNSUPPORTED_PLAN_VERSION',
  'EMPTY_PLAN',
  'DUPLICATE_STEP_ID',
  'UNKNOWN_CAPABILITY',
  'CAPABILITY_VERSION_MISMATCH',
  'REQUIRED_INPUT_MISSING',
  'INPUT_TYPE_MISMATCH',
  'INVALID_RESULT_REFERENCE',
  'RESULT_REFERENCE_NOT_EARLIER',
  'AMBIGUOUS_RESULT_REFERENCE',
  // A Standard Schema refusing a literal input at admission (docs/api.md, "Input schemas").
  'INPUT_INVALID',
  // The value domain of a 2.0 plan (docs/api.md, "Plan version 2.0").
  'VALUE_NOT_PLAIN_DATA',
  'VALUE_TOO_DEEP',
  'VALUE_TOO_MANY_CONTAINERS',
  'VALUE_TOO_MANY_EDGES',
  'VALUE_TOO_LONG',
  // Strict 2.0 plans (docs/api.md, "Plan version 2.0").
  'UNKNOWN_STEP_FIELD',
  'UNDECLARED_INPUT_FIELD',
  // Step bounds (docs/api.md, "Bounds").
  'BOUNDS_INVALID',
];

// PlanAdmissionIssue.code is exactly the catalog's admission issue codes (checked by tsc).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const issueCodeIsCatalogs: Same<PlanAdmissionIssue['code'], AdmissionIssueCode> = true;

// The sections of docs/errors.md, in order, and the catalog group each one lists.
const SECTIONS: readonly (readonly [string, Readonly<Record<string, string>>])[] = [
  ['Thrown errors', THROWN_ERRORS],
  ['Step failures', STEP_FAILURES],
  ['Outbound MCP capabilities', OUTBOUND_MCP_ERRORS],
  ['Admission issue codes', ADMISSION_ISSUES],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.c?ts$/.test(entry.name) ? [path] : [];
  });
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** Where src/ spells a catalog code as a string literal, outside the catalog (comments aside). */
function codeLiterals(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const path = relative(ROOT, file).split('\\').join('/');
    if (path === CATALOG_FILE) continue;
    // Comments become blanks of the same length, so line numbers stay right.
    const text = readFileSync(file, 'utf8').replace(
      /\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/.*$/gm,
      (c) => c.replace(/[^\n]/g, ' '),
    );
    for (const match of text.matchAll(/(['"`])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\1/g)) {
      if (Object.hasOwn(ERROR_CATALOG, match[2] as string))
        found.push(`${path}:${lineOf(text, match.index)} ${match[0]}`);
    }
  }
  return found;
}

interface Row {
  section: string;
  code: string;
  raisedWhen: string;
  whatToDo: string;
}

function documentedRows(): Row[] {
  const text = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
  return text
    .split(/^## /m)
    .slice(1)
    .flatMap((part) => {
      const section = part.slice(0, part.indexOf('\n'));
      return [...part.matchAll(/^\|\s*`([^`]+)`\s*\|([^|\n]*)\|([^|\n]*)\|\s*$/gm)].map((m) => ({
        section,
        code: m[1] as string,
        raisedWhen: (m[2] as string).trim(),
        whatToDo: (m[3] as string).trim(),
      }));
    });
}

describe('docs/errors.md against the catalog of src/errors/error-codes.ts (docs/decisions.md, "House rules")', () => {
  const catalog = Object.keys(ERROR_CATALOG);
  const rows = documentedRows();
  const documented = new Set(rows.map((row) => row.code));

  it('names each code as itself: ErrorCode.X is "X", for every code of the catalog', () => {
    assert.ok(issueCodeIsCatalogs);
    assert.deepEqual(Object.keys(ErrorCode), catalog);
    assert.deepEqual(
      Object.entries(ErrorCode).filter(([key, value]) => key !== value),
      [],
    );
    assert.ok(Object.isFrozen(ErrorCode));
  });

  it('holds each code once, across its groups', () => {
    const grouped = SECTIONS.flatMap(([, group]) => Object.keys(group));
    assert.deepEqual(
      grouped.filter((code, index) => grouped.indexOf(code) !== index),
      [],
    );
    assert.deepEqual(grouped, catalog);
  });

  it('uses SCREAMING_SNAKE codes only (docs/decisions.md, "House rules")', () => {
    assert.deepEqual(
      catalog.filter((code) => !CODE.test(code)),
      [],
    );
  });

  it('types PlanAdmissionIssue.code as exactly the issue codes of docs/api.md, "runtime.executePlan"', () => {
    assert.deepEqual(Object.keys(ADMISSION_ISSUES).sort(), [...API_ISSUE_CODES].sort());
  });

  it('documents every code of the catalog, in its section, with the meaning the catalog gives it', () => {
    const problems: string[] = [];
    for (const [section, group] of SECTIONS) {
      for (const [code, meaning] of Object.entries(group)) {
        const row = rows.find((candidate) => candidate.code === code);
        if (row === undefined) problems.push(`${code}: not in docs/errors.md`);
        else if (!row.section.startsWith(section))
          problems.push(`${code}: listed under "${row.section}", not "${section}"`);
        else if (row.raisedWhen !== meaning)
          problems.push(`${code}: docs/errors.md says "${row.raisedWhen}"`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('documents no code that the catalog does not hold', () => {
    assert.deepEqual(
      [...documented].filter((code) => !Object.hasOwn(ERROR_CATALOG, code)),
      [],
    );
  });

  it('spells no catalog code as a string in src/ outside the catalog (ErrorCode.X instead)', () => {
    assert.deepEqual(codeLiterals(), []);
  });

  it('has exactly one row per code, each saying when it is raised and what to do', () => {
    const codes = rows.map((row) => row.code);
    assert.deepEqual(
      codes.filter((code, index) => codes.indexOf(code) !== index),
      [],
    );
    for (const row of rows) {
      assert.notEqual(row.raisedWhen, '', `${row.code}: empty "raised when"`);
      assert.notEqual(row.whatToDo, '', `${row.code}: empty "what to do"`);
    }
  });
});
