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

  it('resolves nothing inside class instances and survives cycles and 10,000-deep nesting', () => {
    class Box {
      inner = { $ref: 'steps.x.result' };
    }
    const found: string[] = [];
    const cyclic: Record<string, unknown> = { r: { $ref: 'steps.x.result' } };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { $ref: 'steps.deep.result' };
    for (let level = 0; level < 10_000; level++) deep = { next: deep };
    const misplaced: InputPath[] = [];
    collectReferences(
      { box: new Box(), date: new Date(), cyclic, deep },
      (text) => found.push(text),
      (path) => misplaced.push(path),
    );
    assert.deepEqual(found, ['steps.x.result', 'steps.deep.result']);
    assert.deepEqual(misplaced, [['box', 'inner']], 'found, and reported as never resolved');
  });

  it('ends a cycle back to the root, and to a container met after flat ones', () => {
    const root: Record<string, unknown> = {
      flat: { n: 1 },
      below: { r: { $ref: 'steps.a.result' } },
    };
    (root.below as Record<string, unknown>).up = root;
    (root.flat as Record<string, unknown>).list = [1, 2];
    const found: [string, InputPath][] = [];
    collectReferences(root, (text, path) => found.push([text, path]));
    assert.deepEqual(found, [['steps.a.result', ['below', 'r']]]);
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

  it('writes a copied key as an own data property: __proto__, a shared container, never an array length', () => {
    // JSON gives an own `__proto__` key: it is replaced as data, the prototype stays.
    const parsed = JSON.parse('{"__proto__": {"$ref": "steps.a.result"}, "n": 1}') as object;
    const withProto = resolveInput(
      parsed,
      [{ ...reference([]), path: ['__proto__'] }],
      [{ polluted: true }],
    ) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(withProto), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(withProto, '__proto__')?.value, {
      polluted: true,
    });
    assert.equal((withProto as { polluted?: unknown }).polluted, undefined);
    // Two references through one container: one copy holds both.
    const shared = { box: { x: { $ref: 'steps.a.result.x' }, y: { $ref: 'steps.a.result.y' } } };
    const both = resolveInput(
      shared,
      [
        { ...reference(['x']), path: ['box', 'x'] },
        { ...reference(['y']), path: ['box', 'y'] },
      ],
      [{ x: 1, y: 2 }],
    );
    assert.deepEqual(both, { box: { x: 1, y: 2 } });
    assert.deepEqual(shared.box.x, { $ref: 'steps.a.result.x' });
    // An input changed into an array after admission: its length is never assigned.
    const list = [1, 2, 3];
    assert.throws(() => resolveInput(list, [{ ...reference([]), path: ['length'] }], [0]));
    assert.deepEqual(list, [1, 2, 3]);
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

describe('where references live (issue 15, item 3)', () => {
  const issuesOf = async (input: unknown) => {
    const ran: unknown[] = [];
    const runtime = runtimeWith();
    const [source, sink] = register(
      runtime,
      { execute: () => ({ v: 'resolved' }) },
      { execute: ({ input: received }) => ran.push(received) },
    );
    let issues: readonly { code: string; field?: string; message: string }[] = [];
    await assert.rejects(
      runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: source as string },
          { id: 'b', capability: sink as string, input },
        ],
      }),
      (error: unknown) => {
        assert.ok(error instanceof PlanAdmissionError);
        issues = error.issues;
        return true;
      },
    );
    assert.deepEqual(ran, [], 'nothing ran');
    assert.deepEqual(await runtime.listJobs(), [], 'no job exists');
    return issues;
  };

  it('refuses at admission a class-instance input root that holds a reference', async () => {
    class Params {
      id = { $ref: 'steps.a.result.v' };
    }
    const issues = await issuesOf(new Params());
    assert.deepEqual(
      issues.map((issue) => [issue.code, issue.field]),
      [['INVALID_RESULT_REFERENCE', 'input.id']],
    );
    assert.match(issues[0]?.message ?? '', /neither a plain object nor an array/);
  });

  it('refuses a reference inside any other non-plain object, however deep', async () => {
    class Box {
      constructor(readonly inner: unknown) {}
    }
    const boxed = Object.assign(new String('s'), { x: { $ref: 'steps.a.result.v' } });
    const fn = Object.assign(() => 1, { x: { deeper: { $ref: 'steps.a.result.v' } } });
    const issues = await issuesOf({
      box: new Box({ plain: [{ $ref: 'steps.a.result.v' }] }),
      boxed,
      fn,
    });
    assert.deepEqual(
      issues.map((issue) => [issue.code, issue.field]),
      [
        ['INVALID_RESULT_REFERENCE', 'input.box.inner.plain.0'],
        ['INVALID_RESULT_REFERENCE', 'input.boxed.x'],
        ['INVALID_RESULT_REFERENCE', 'input.fn.x.deeper'],
      ],
    );
  });

  it("refuses a reference under an array's non-index key ('01', '-0', 'foo', '4294967295')", async () => {
    for (const key of ['01', '-0', 'foo', '4294967295', '1.0', ' 1']) {
      const list: unknown[] = ['keep'];
      Object.defineProperty(list, key, {
        value: { $ref: 'steps.a.result.v' },
        enumerable: true,
        writable: true,
        configurable: true,
      });
      const issues = await issuesOf({ list });
      assert.deepEqual(
        issues.map((issue) => [issue.code, issue.field]),
        [['INVALID_RESULT_REFERENCE', `input.list.${key}`]],
        key,
      );
      assert.match(issues[0]?.message ?? '', /non-index array key/);
    }
  });

  it('resolves at array indexes, in plain and null-prototype objects, and keeps named array data', async () => {
    const received: unknown[] = [];
    const runtime = runtimeWith();
    const [source, sink] = register(
      runtime,
      { execute: () => ({ v: 'resolved' }) },
      { execute: ({ input }) => received.push(input) },
    );
    const bare = Object.assign(Object.create(null) as object, { r: { $ref: 'steps.a.result.v' } });
    const list: unknown[] = [];
    list[2] = { $ref: 'steps.a.result.v' };
    Object.assign(list, { label: 'data' });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: source as string },
        { id: 'b', capability: sink as string, input: { bare, list } },
      ],
    });
    assert.equal(job.status, 'completed', job.error);
    const got = received[0] as { bare: { r: unknown }; list: unknown[] & { label?: unknown } };
    assert.equal(got.bare.r, 'resolved');
    assert.equal(got.list[2], 'resolved');
    assert.equal(got.list.length, 3);
    assert.equal(1 in got.list, false, 'a hole stays a hole');
    assert.equal(got.list.label, 'data');
  });

  it('refuses a $ref text over 4,096 characters with a short message, before any job exists', async () => {
    const huge = `steps.a.result.${'x'.repeat(1_000_000)}`;
    const issues = await issuesOf({ value: { $ref: huge } });
    assert.deepEqual(
      issues.map((issue) => issue.code),
      ['INVALID_RESULT_REFERENCE'],
    );
    assert.ok((issues[0]?.message.length ?? Infinity) < 300, issues[0]?.message.slice(0, 300));
    assert.equal(
      (parseReference(`steps.a.result.${'x'.repeat(4_096 - 15)}`, 1, ids('a')) as { code?: string })
        .code,
      undefined,
      'exactly 4,096 characters are accepted',
    );
  });

  it('cuts the reference text in step-time failure messages', async () => {
    const runtime = runtimeWith();
    const [source, sink] = register(runtime, { execute: () => ({}) }, { execute: () => 'ran' });
    const text = `steps.a.result.${'y'.repeat(4_000)}`;
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: source as string },
        { id: 'b', capability: sink as string, input: { value: { $ref: text } } },
      ],
    });
    assert.equal(job.status, 'failed');
    assert.match(job.error ?? '', /not an own property/);
    assert.ok((job.error?.length ?? Infinity) < 300, `${job.error?.length} characters`);
  });
});
