// docs/decisions.md, "House rules": the error catalogue (docs/errors.md) and the codes src/ issues agree,
// both ways. Codes are read from the places that issue them, not from every capitalised string:
//  - createError(<Class>, '<CODE>', ...) and issueError(<error>, '<CODE>');
//  - the same calls with an identifier, resolved through `const NAME = '<CODE>'` in the file, or
//    through a local wrapper `function f(code, ...) { return createError(X, code, ...) }` whose
//    call sites pass literals;
//  - the PlanAdmissionIssue code union in src/plan/plan-admission-error.ts.
// A call whose code cannot be resolved this way fails the test, so no code goes unseen.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CODE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

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
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

interface Scan {
  codes: Map<string, string[]>; // code -> where it is issued (file:line)
  unresolved: string[]; // call sites whose code could not be read
}

function scanIssuedCodes(): Scan {
  const codes = new Map<string, string[]>();
  const unresolved: string[] = [];
  const add = (code: string, where: string) => codes.set(code, [...(codes.get(code) ?? []), where]);
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const path = relative(ROOT, file).split('\\').join('/');
    if (path === 'src/errors/warrant-error.ts') continue; // defines the two functions
    const text = readFileSync(file, 'utf8');
    const constants = new Map(
      [...text.matchAll(/\bconst\s+([A-Za-z_$][\w$]*)\s*=\s*'([^']*)'/g)].map((m) => [m[1], m[2]]),
    );
    const calls = /\b(createError|issueError)\(\s*[^,()]+,\s*(?:'([^']*)'|([A-Za-z_$][\w$]*))/g;
    for (const match of text.matchAll(calls)) {
      const where = `${path}:${lineOf(text, match.index)}`;
      const [, , literal, identifier] = match;
      if (literal !== undefined) {
        add(literal, where);
        continue;
      }
      const constant = constants.get(identifier as string);
      if (constant !== undefined) {
        add(constant, where);
        continue;
      }
      // A wrapper forwarding its parameter: find the function and the literals its callers pass.
      const before = text.slice(0, match.index);
      const wrappers = [
        ...before.matchAll(/function\s+([A-Za-z_$][\w$]*)\s*\(\s*([A-Za-z_$][\w$]*)\s*:/g),
      ];
      const wrapper = wrappers.at(-1);
      if (wrapper === undefined || wrapper[2] !== identifier) {
        unresolved.push(`${where} (${match[0].replace(/\s+/g, ' ')})`);
        continue;
      }
      const callers = [...text.matchAll(new RegExp(`\\b${wrapper[1]}\\(\\s*'([^']*)'`, 'g'))];
      if (callers.length === 0) unresolved.push(`${where} (wrapper ${wrapper[1]} has no callers)`);
      for (const caller of callers)
        add(caller[1] as string, `${path}:${lineOf(text, caller.index)}`);
    }
  }
  return { codes, unresolved };
}

function admissionIssueUnion(): string[] {
  const text = readFileSync(join(ROOT, 'src/plan/plan-admission-error.ts'), 'utf8');
  const union = /interface PlanAdmissionIssue\s*\{[^}]*?\bcode:\s*([^;]+);/.exec(text);
  assert.ok(union, 'src/plan/plan-admission-error.ts: PlanAdmissionIssue.code union not found');
  return [...(union[1] as string).matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
}

interface Row {
  code: string;
  raisedWhen: string;
  whatToDo: string;
}

function documentedRows(): Row[] {
  const text = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
  return [...text.matchAll(/^\|\s*`([^`]+)`\s*\|([^|\n]*)\|([^|\n]*)\|\s*$/gm)].map((m) => ({
    code: m[1] as string,
    raisedWhen: (m[2] as string).trim(),
    whatToDo: (m[3] as string).trim(),
  }));
}

describe('docs/errors.md against src/ (docs/decisions.md, "House rules")', () => {
  const scan = scanIssuedCodes();
  const issueCodes = admissionIssueUnion();
  const used = new Set([...scan.codes.keys(), ...issueCodes]);
  const rows = documentedRows();
  const documented = new Set(rows.map((row) => row.code));

  it('can read the code of every createError/issueError call in src/', () => {
    assert.deepEqual(scan.unresolved, []);
    assert.ok(scan.codes.has('PLAN_ADMISSION_REJECTED'), 'PlanAdmissionError issuance not found');
  });

  it('uses SCREAMING_SNAKE codes only (docs/decisions.md, "House rules")', () => {
    assert.deepEqual(
      [...used].filter((code) => !CODE.test(code)),
      [],
    );
  });

  it('types PlanAdmissionIssue.code as exactly the issue codes of docs/api.md, "runtime.executePlan"', () => {
    assert.deepEqual([...issueCodes].sort(), [...API_ISSUE_CODES].sort());
  });

  it('documents every code src/ issues, and every admission issue code', () => {
    const missing = [...used].filter((code) => !documented.has(code));
    assert.deepEqual(
      missing.map(
        (code) => `${code} (${(scan.codes.get(code) ?? ['PlanAdmissionIssue']).join(', ')})`,
      ),
      [],
    );
  });

  it('documents no code that src/ no longer issues', () => {
    assert.deepEqual(
      [...documented].filter((code) => !used.has(code)),
      [],
    );
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
