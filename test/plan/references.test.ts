import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  collectReferences,
  parseReference,
  referenceText,
  resolveInput,
  resolvePath,
  type InputPath,
  type ParsedReference,
} from '../../src/plan/references.js';
import { PlanAdmissionError } from '../../src/plan/plan-admission-error.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';

const ids = (...list: string[]) => new Map(list.map((id, index) => [id, index]));

function parsed(text: string, current: number, known: Map<string, number>): ParsedReference {
  const result = parseReference(text, current, known);
  assert.ok(!('code' in result), JSON.stringify(result));
  return result;
}

describe('referenceText()', () => {
  it('recognises only an object whose single own key is a $ref string data property', () => {
    assert.equal(referenceText({ $ref: 'steps.a.result' }), 'steps.a.result');
    const notReferences: unknown[] = [
      { $ref: 'steps.a.result', extra: 1 },
      { $ref: 5 },
      Object.defineProperty({}, '$ref', { get: () => 'steps.a.result', enumerable: true }),
      Object.create({ $ref: 'steps.a.result' }),
      Object.assign({ $ref: 'steps.a.result' }, { [Symbol('s')]: 1 }),
      Object.assign(['steps.a.result'], { $ref: 'steps.a.result' }),
      'steps.a.result',
      null,
    ];
    for (const value of notReferences) assert.equal(referenceText(value), undefined);
  });
});

describe('parseReference()', () => {
  it('matches ids containing dots against earlier steps', () => {
    assert.deepEqual(parsed('steps.a.b.result.x.0', 1, ids('a.b', 'me')), {
      stepIndex: 0,
      stepId: 'a.b',
      segments: ['x', '0'],
      text: 'steps.a.b.result.x.0',
    });
    assert.deepEqual(parsed('steps.a.result', 1, ids('a', 'me')).segments, []);
  });

  it('reports ambiguity, later or unknown targets and malformed text with their codes', () => {
    const known = ids('a', 'a.result', 'me', 'later');
    const code = (text: string) => (parseReference(text, 2, known) as { code?: string }).code;
    assert.equal(code('steps.a.result.result.x'), 'AMBIGUOUS_RESULT_REFERENCE');
    assert.equal(code('steps.later.result'), 'RESULT_REFERENCE_NOT_EARLIER');
    assert.equal(code('steps.me.result'), 'RESULT_REFERENCE_NOT_EARLIER');
    assert.equal(code('steps.nobody.result'), 'RESULT_REFERENCE_NOT_EARLIER');
    assert.equal(code('steps.a'), 'INVALID_RESULT_REFERENCE');
    assert.equal(code('step.a.result'), 'INVALID_RESULT_REFERENCE');
    assert.equal(code('steps.a.result.'), 'INVALID_RESULT_REFERENCE');
    assert.equal(code('steps.a.resultx'), 'INVALID_RESULT_REFERENCE');
  });
});

describe('collectReferences()', () => {
  it('finds references at the root, in nested objects and arrays, in document order', () => {
    const found: [string, InputPath][] = [];
    collectReferences(
      {
        a: { $ref: 'steps.x.result' },
        list: [1, { $ref: 'steps.y.result' }, { deep: { $ref: 'steps.z.result' } }],
        b: { $ref: 'steps.w.result' },
      },
      (text, path) => found.push([text, path]),
    );
    assert.deepEqual(found, [
      ['steps.x.result', ['a']],
      ['steps.y.result', ['list', 1]],
      ['steps.z.result', ['list', 2, 'deep']],
      ['steps.w.result', ['b']],
    ]);
    const root: [string, InputPath][] = [];
    collectReferences({ $ref: 'steps.x.result' }, (text, path) => root.push([text, path]));
    assert.deepEqual(root, [['steps.x.result', []]]);
  });

  it('does not search class instances and survives cycles and 10,000-deep nesting', () => {
    class Box {
      inner = { $ref: 'steps.x.result' };
    }
    const found: string[] = [];
    const cyclic: Record<string, unknown> = { r: { $ref: 'steps.x.result' } };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { $ref: 'steps.deep.result' };
    for (let level = 0; level < 10_000; level++) deep = { next: deep };
    collectReferences({ box: new Box(), date: new Date(), cyclic, deep }, (text) =>
      found.push(text),
    );
    assert.deepEqual(found, ['steps.x.result', 'steps.deep.result']);
  });

  it('finds a reference at every place of a shared container, with each path', () => {
    const shared = { got: { $ref: 'steps.a.result' } };
    const found: [string, InputPath][] = [];
    collectReferences({ first: shared, list: [shared, { shared }] }, (text, path) =>
      found.push([text, path]),
    );
    assert.deepEqual(found, [
      ['steps.a.result', ['first', 'got']],
      ['steps.a.result', ['list', 0, 'got']],
      ['steps.a.result', ['list', 1, 'shared', 'got']],
    ]);
  });

  it('throws instead of walking an input whose shared containers multiply past the limit', () => {
    // 21 levels of { left: x, right: x }: 2^21 places for a few dozen objects. (No reference at
    // the leaves: their paths would exhaust MAX_REFERENCE_PATH_CHARS first.)
    let node: Record<string, unknown> = { leaf: 1 };
    for (let level = 0; level < 21; level++) node = { left: node, right: node };
    assert.throws(
      () =>
        collectReferences(node, () => {
          /* counted, not kept */
        }),
      (error: unknown) =>
        error instanceof RangeError && error.message.includes('more than 1000000 objects'),
    );
  });

  it('throws instead of keeping the paths of thousands of deeply nested references', () => {
    // 2,000 references 1,000 arrays down: 2,000 paths of 2,000 characters each.
    let node: unknown = Array.from({ length: 2_000 }, () => ({ $ref: 'steps.a.result' }));
    for (let level = 0; level < 1_000; level++) node = [node];
    let visited = 0;
    assert.throws(
      () => collectReferences(node, () => visited++),
      (error: unknown) =>
        error instanceof RangeError &&
        error.message.includes('paths are longer than 1000000 characters together'),
    );
    assert.ok(visited < 1_000, 'stopped once the budget was spent');
  });
});

describe('resolvePath() and resolveInput()', () => {
  const reference = (segments: string[]): ParsedReference => ({
    stepIndex: 0,
    stepId: 'a',
    segments,
    text: `steps.a.result.${segments.join('.')}`,
  });

  it('reads own properties, array indexes and own getters', () => {
    const value = {
      list: [10, 20],
      get computed() {
        return 'got';
      },
    };
    assert.equal(resolvePath(value, reference(['list', '1'])), 20);
    assert.equal(resolvePath(value, reference(['computed'])), 'got');
    assert.equal(resolvePath(value, reference([])), value);
  });

  it('rejects inherited members: toString, constructor, __proto__, an array method, a prototype property', () => {
    const base = Object.create({ inherited: 1 }) as object;
    for (const [value, segment] of [
      [{}, 'toString'],
      [{}, 'constructor'],
      [{}, '__proto__'],
      [[1, 2], 'map'],
      [base, 'inherited'],
    ] as const) {
      assert.throws(() => resolvePath(value, reference([segment])), /not an own property/, segment);
    }
    assert.throws(() => resolvePath('text', reference(['length'])), /is string/);
    assert.throws(() => resolvePath(null, reference(['x'])), /is null/);
  });

  it('copies containers along reference paths and never writes to the caller input', () => {
    const input = {
      keep: { untouched: true },
      nested: { to: { $ref: 'steps.a.result.email' } },
      list: [{ $ref: 'steps.a.result' }],
    };
    const snapshot = JSON.stringify(input);
    const references = [
      { ...reference(['email']), path: ['nested', 'to'] },
      { ...reference([]), path: ['list', 0] },
    ];
    const resolved = resolveInput(input, references, [{ email: 'a@b.c' }]) as typeof input;
    assert.equal(JSON.stringify(input), snapshot);
    assert.deepEqual(resolved, {
      keep: { untouched: true },
      nested: { to: 'a@b.c' },
      list: [{ email: 'a@b.c' }],
    });
    assert.equal(resolved.keep, input.keep, 'containers off the reference paths are shared');
    assert.ok(Array.isArray(resolved.list));
    const untouched = { n: 1 };
    assert.equal(resolveInput(untouched, [], []), untouched);
  });
});

describe('references through OperatorRuntime', () => {
  it('rejects at admission an input whose shared containers multiply past the limit, running nothing', async () => {
    const ran: string[] = [];
    const runtime = runtimeWith();
    const [sink] = register(runtime, { execute: () => ran.push('sink') });
    let node: Record<string, unknown> = { leaf: 1 };
    for (let level = 0; level < 21; level++) node = { left: node, right: node };
    await assert.rejects(
      runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'a', capability: sink as string, input: node }],
      }),
      (error: unknown) =>
        error instanceof PlanAdmissionError &&
        error.issues.length === 1 &&
        error.issues[0]?.code === 'INVALID_PLAN' &&
        error.issues[0].message.includes('input could not be read'),
    );
    assert.deepEqual(ran, []);
    assert.deepEqual(await runtime.listJobs(), []);
  });

  it('fails the step and never runs the next capability when a path reaches an inherited property', async () => {
    const ran: string[] = [];
    const runtime = runtimeWith();
    const [source, sink] = register(
      runtime,
      { execute: () => Object.create({ secret: 's' }) as object },
      { execute: () => ran.push('sink') },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: source as string },
        {
          id: 'b',
          capability: sink as string,
          input: { value: { $ref: 'steps.a.result.secret' } },
        },
        { id: 'c', capability: sink as string },
      ],
    });
    assert.equal(job.status, 'failed');
    assert.deepEqual(ran, []);
    assert.deepEqual(
      job.steps.map((step) => step.status),
      ['completed', 'failed', 'skipped'],
    );
  });
});
