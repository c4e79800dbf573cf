import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPlanAdmissionError, type PlanAdmissionIssue } from '../../src/index.js';
import {
  recordEvents,
  recordingAuthorizer,
  register,
  runtimeWith,
} from '../support/runtime-fixtures.js';

const PREFIX = 'Execution plan failed validation: ';

async function rejection(
  run: () => Promise<unknown>,
): Promise<{ message: string; issues: readonly PlanAdmissionIssue[] }> {
  try {
    await run();
  } catch (error) {
    assert.ok(isPlanAdmissionError(error), `not a PlanAdmissionError: ${String(error)}`);
    return error;
  }
  return assert.fail('admission did not reject');
}

function setup() {
  const authorizer = recordingAuthorizer();
  const runtime = runtimeWith({ authorizer });
  let invoked = 0;
  const [plain, typed] = register(
    runtime,
    { version: '2.0.0', execute: () => invoked++ },
    {
      inputSchema: {
        name: { type: 'string', required: true, description: 'n' },
        count: { type: 'number', required: false, description: 'c' },
        options: { type: 'object', required: false, description: 'o' },
        tags: { type: 'array', required: false, description: 't' },
        flag: { type: 'boolean', required: false, description: 'f' },
      },
      execute: () => invoked++,
    },
  );
  const events = recordEvents(runtime);
  return {
    runtime,
    authorizer,
    events,
    plain: plain as string,
    typed: typed as string,
    invoked: () => invoked,
  };
}

describe('OperatorRuntime#executePlan() admission', () => {
  it('rejects version "2.0" with UNSUPPORTED_PLAN_VERSION before creating a job, event, authorizer or capability call', async () => {
    const { runtime, authorizer, events, plain, invoked } = setup();
    const error = await rejection(() =>
      runtime.executePlan({ version: '2.0', steps: [{ id: 'a', capability: plain }] } as never),
    );
    assert.equal(error.message, `${PREFIX}plan: version must be "1.0", got "2.0"`);
    assert.deepEqual(error.issues, [
      {
        code: 'UNSUPPORTED_PLAN_VERSION',
        message: 'plan: version must be "1.0", got "2.0"',
        field: 'version',
        path: '/version',
      },
    ]);
    assert.deepEqual(await runtime.listJobs(), []);
    assert.equal(events.length, 0);
    assert.equal(authorizer.calls.length, 0);
    assert.equal(invoked(), 0);
  });

  it('rejects an empty plan with EMPTY_PLAN and a non-object plan or steps with INVALID_PLAN', async () => {
    const { runtime } = setup();
    assert.equal(
      (await rejection(() => runtime.executePlan({ version: '1.0', steps: [] }))).issues[0]?.code,
      'EMPTY_PLAN',
    );
    for (const plan of [null, 'plan', [], { version: '1.0' }, { version: '1.0', steps: {} }]) {
      assert.equal(
        (await rejection(() => runtime.executePlan(plan as never))).issues[0]?.code,
        'INVALID_PLAN',
      );
    }
  });

  it('rejects non-object steps and non-string or empty ids and capabilities with INVALID_PLAN', async () => {
    const { runtime, plain } = setup();
    const error = await rejection(() =>
      runtime.executePlan({
        version: '1.0',
        steps: [
          null,
          [],
          'step',
          { id: 7, capability: plain },
          { id: '', capability: plain },
          { id: Symbol('s'), capability: plain },
          { id: 'x', capability: 5 },
        ],
      } as never),
    );
    assert.deepEqual(
      error.issues.map((issue) => [issue.code, issue.stepIndex, issue.field]),
      [
        ['INVALID_PLAN', 0, undefined],
        ['INVALID_PLAN', 1, undefined],
        ['INVALID_PLAN', 2, undefined],
        ['INVALID_PLAN', 3, 'id'],
        ['INVALID_PLAN', 4, 'id'],
        ['INVALID_PLAN', 5, 'id'],
        ['INVALID_PLAN', 6, 'capability'],
      ],
    );
    assert.equal(error.issues[6]?.message, 'steps[6] "x": capability must be a string, got 5');
  });

  it('names the step in a reason or idempotencyKey refusal: a non-string, or a getter that throws', async () => {
    const { runtime, plain } = setup();
    const throwing = { id: 'b', capability: plain };
    Object.defineProperty(throwing, 'idempotencyKey', {
      enumerable: true,
      get() {
        throw new Error('no key');
      },
    });
    const error = await rejection(() =>
      runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'a', capability: plain, reason: 7 }, throwing],
      } as never),
    );
    assert.deepEqual(
      error.issues.map((issue) => [issue.code, issue.stepIndex, issue.field, issue.message]),
      [
        ['INVALID_PLAN', 0, 'reason', 'steps[0] "a": reason must be a string when present, got 7'],
        [
          'INVALID_PLAN',
          1,
          'idempotencyKey',
          'steps[1] "b": idempotencyKey could not be read (no key)',
        ],
      ],
    );
  });

  it('reports duplicate ids (exact equality), unknown capabilities and version mismatches, all in step order', async () => {
    const { runtime, plain } = setup();
    const error = await rejection(() =>
      runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: plain, capabilityVersion: '2.0.0' },
          { id: 'A', capability: plain },
          { id: 'a', capability: 'Missing.Capability' },
          { id: 'd', capability: plain, capabilityVersion: '' },
          { id: 'e', capability: plain, capabilityVersion: '2.0' },
          { id: 'f', capability: plain.toUpperCase() },
        ],
      }),
    );
    assert.deepEqual(
      error.issues.map((issue) => [issue.code, issue.stepIndex, issue.stepId]),
      [
        ['DUPLICATE_STEP_ID', 2, 'a'],
        ['UNKNOWN_CAPABILITY', 2, 'a'],
        ['CAPABILITY_VERSION_MISMATCH', 3, 'd'],
        ['CAPABILITY_VERSION_MISMATCH', 4, 'e'],
        ['UNKNOWN_CAPABILITY', 5, 'f'],
      ],
    );
    assert.equal(error.message, PREFIX + error.issues.map((issue) => issue.message).join('; '));
    assert.equal(
      error.issues[2]?.message,
      `steps[3] "d": capabilityVersion "" does not match registered version "2.0.0" of ${JSON.stringify(plain)}`,
    );
  });

  // Plans of up to 8 steps find ids by a scan, longer ones through a Map: both give the same.
  for (const padding of [0, 10]) {
    it(`judges duplicate ids and references by each id's first occurrence (${3 + padding} steps)`, async () => {
      const { runtime, plain } = setup();
      const extra = Array.from({ length: padding }, (_, index) => ({
        id: `pad${index}`,
        capability: plain,
      }));
      const error = await rejection(() =>
        runtime.executePlan({
          version: '1.0',
          steps: [
            { id: 'a', capability: plain },
            { id: 'a', capability: plain, input: { back: { $ref: 'steps.a.result' } } },
            {
              id: 'c',
              capability: plain,
              input: { ok: { $ref: 'steps.a.result' }, no: { $ref: 'steps.pad0.result' } },
            },
            ...extra,
          ],
        }),
      );
      assert.deepEqual(
        error.issues.map((issue) => [issue.code, issue.stepIndex, issue.field]),
        [
          ['DUPLICATE_STEP_ID', 1, 'id'],
          ['RESULT_REFERENCE_NOT_EARLIER', 2, 'input.no'],
        ],
      );
      assert.match(error.issues[0]?.message ?? '', /already used by steps\[0\]/);
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: plain },
          ...extra,
          { id: 'z', capability: plain, input: { back: { $ref: 'steps.a.result' } } },
        ],
      });
      assert.equal(job.status, 'completed');
    });
  }

  it('treats an omitted or undefined capabilityVersion as unspecified', async () => {
    const { runtime, plain } = setup();
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: plain },
        { id: 'b', capability: plain, capabilityVersion: undefined },
        { id: 'c', capability: plain, capabilityVersion: '2.0.0' },
      ],
    });
    assert.equal(job.status, 'completed');
  });

  it('checks input fields: required missing for undefined, null and "", types, finite numbers', async () => {
    const { runtime, typed } = setup();
    const inputs: [unknown, string[]][] = [
      [undefined, ['REQUIRED_INPUT_MISSING input.name']],
      [{ name: null }, ['REQUIRED_INPUT_MISSING input.name']],
      [{ name: '' }, ['REQUIRED_INPUT_MISSING input.name']],
      [{ name: 3 }, ['INPUT_TYPE_MISMATCH input.name']],
      [{ name: 'n', count: Number.NaN }, ['INPUT_TYPE_MISMATCH input.count']],
      [{ name: 'n', count: Infinity }, ['INPUT_TYPE_MISMATCH input.count']],
      [{ name: 'n', options: [] }, ['INPUT_TYPE_MISMATCH input.options']],
      [{ name: 'n', options: null }, []],
      [{ name: 'n', tags: {} }, ['INPUT_TYPE_MISMATCH input.tags']],
      [{ name: 'n', flag: 'yes' }, ['INPUT_TYPE_MISMATCH input.flag']],
      ['a string', ['INPUT_TYPE_MISMATCH input']],
      [{ name: 'n', count: 1, options: {}, tags: [], flag: false, extra: 'ignored' }, []],
    ];
    for (const [input, expected] of inputs) {
      const plan = { version: '1.0' as const, steps: [{ id: 's', capability: typed, input }] };
      if (expected.length === 0) {
        assert.equal((await runtime.executePlan(plan)).status, 'completed', JSON.stringify(input));
        continue;
      }
      const error = await rejection(() => runtime.executePlan(plan));
      assert.deepEqual(
        error.issues.map((issue) => `${issue.code} ${issue.field}`),
        expected,
        JSON.stringify(input),
      );
    }
  });

  it('reports reference issues: malformed, not earlier (later, itself, unknown), ambiguous', async () => {
    const { runtime, plain } = setup();
    const error = await rejection(() =>
      runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: plain },
          { id: 'a.result', capability: plain },
          {
            id: 'c',
            capability: plain,
            input: {
              bad: { $ref: 'results.a' },
              empty: { $ref: 'steps.a.result..x' },
              later: { $ref: 'steps.d.result' },
              self: { $ref: 'steps.c.result' },
              unknown: { $ref: 'steps.zzz.result' },
              twice: { $ref: 'steps.a.result.result.x' },
              fine: { $ref: 'steps.a.result' },
            },
          },
          { id: 'd', capability: plain },
        ],
      }),
    );
    assert.deepEqual(
      error.issues.map((issue) => `${issue.code} ${issue.field}`),
      [
        'INVALID_RESULT_REFERENCE input.bad',
        'INVALID_RESULT_REFERENCE input.empty',
        'RESULT_REFERENCE_NOT_EARLIER input.later',
        'RESULT_REFERENCE_NOT_EARLIER input.self',
        'RESULT_REFERENCE_NOT_EARLIER input.unknown',
        'AMBIGUOUS_RESULT_REFERENCE input.twice',
      ],
    );
  });

  it('does not type-check a field holding a reference at admission, but checks the resolved value at step time', async () => {
    const { runtime, plain, typed } = setup();
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: plain },
        { id: 'b', capability: typed, input: { name: { $ref: 'steps.a.result' } } },
      ],
    });
    assert.equal(job.status, 'failed');
    assert.match(
      job.error ?? '',
      /^Input validation failed: input\.name must be a string, got a number$/,
    );
  });

  it('rejects non-string optional fields and a throwing getter with INVALID_PLAN, never throwing anything else', async () => {
    const { runtime, plain } = setup();
    const error = await rejection(() =>
      runtime.executePlan({
        version: '1.0',
        goal: 42,
        id: {},
        steps: [
          {
            id: 'a',
            capability: plain,
            reason: false,
            get input() {
              throw new Error('getter exploded');
            },
          },
        ],
      } as never),
    );
    assert.deepEqual(
      error.issues.map((issue) => issue.field),
      ['id', 'goal', 'reason', 'input'],
    );
    assert.match(error.issues[3]?.message ?? '', /input could not be read \(getter exploded\)/);
  });

  it('admits a plan with __proto__ and constructor keys in its input as plain data', async () => {
    const { runtime } = setup();
    let received: unknown;
    const [name] = register(runtime, { execute: ({ input }) => (received = input) });
    const input = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}',
    ) as object;
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name as string, input }],
    });
    assert.equal(job.status, 'completed');
    assert.equal(received, input);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  it('admits a 10,000-step plan with a reference per step', async () => {
    const { runtime, plain } = setup();
    const steps = Array.from({ length: 10_000 }, (_, index) => ({
      id: `s${index}`,
      capability: plain,
      input: index === 0 ? {} : { previous: { $ref: `steps.s${index - 1}.result` } },
    }));
    const job = await runtime.executePlan({ version: '1.0', steps });
    assert.equal(job.steps.length, 10_000);
    assert.equal(job.status, 'completed');
  });
});

// Issue 48, docs/api.md "Plan version 2.0": strict 2.0 steps and inputs, and where
// each issue is (`path`) with a suggestion (`hint`) in every version.
describe('strict 2.0 plans, issue paths and hints', () => {
  const authorizer = recordingAuthorizer();
  const runtime = runtimeWith({ authorizer, planVersions: ['1.0', '2.0'] });
  let invoked = 0;
  const [fields, bare] = register(
    runtime,
    {
      inputSchema: {
        to: { type: 'string', required: true, description: 'recipient' },
        'a.b': { type: 'number', required: false, description: 'a dotted key' },
      },
      execute: () => invoked++,
    },
    { execute: () => invoked++ },
  );
  const [fieldsName, bareName] = [fields as string, bare as string];

  it('refuses a 2.0 step key other than the step fields: UNKNOWN_STEP_FIELD, version meaning capabilityVersion', async () => {
    const error = await rejection(() =>
      runtime.executePlan({
        version: '2.0',
        steps: [
          { id: 'a', capability: fieldsName, version: '2.0.0', input: { to: 'x' } },
          { id: 'b', capability: bareName, inptu: {}, zzzzzzzz: 1 },
        ],
      } as never),
    );
    assert.deepEqual(
      error.issues.map(({ code, path, hint, stepIndex, field }) => ({
        code,
        path,
        hint,
        stepIndex,
        field,
      })),
      [
        {
          code: 'UNKNOWN_STEP_FIELD',
          path: '/steps/0/version',
          hint: 'did you mean "capabilityVersion"?',
          stepIndex: 0,
          field: 'version',
        },
        {
          code: 'UNKNOWN_STEP_FIELD',
          path: '/steps/1/inptu',
          hint: 'did you mean "input"?',
          stepIndex: 1,
          field: 'inptu',
        },
        {
          code: 'UNKNOWN_STEP_FIELD',
          path: '/steps/1/zzzzzzzz',
          hint: undefined,
          stepIndex: 1,
          field: 'zzzzzzzz',
        },
      ],
    );
    assert.match(
      error.issues[0]?.message as string,
      /^steps\[0\] "a": "version" is not a step field; did you mean "capabilityVersion"\?$/,
    );
    assert.match(error.issues[2]?.message as string, /a 2\.0 step has id, capability, /);
    assert.equal(invoked, 0);
    assert.equal(authorizer.calls.length, 0);
  });

  it('admits every step field in 2.0 (empty bounds included) and any key but bounds in 1.0, as before', async () => {
    const step = {
      id: 'a',
      capability: fieldsName,
      capabilityVersion: '1.0.0',
      input: { to: 'x' },
      reason: 'r',
      idempotencyKey: 'k',
      bounds: {},
    };
    assert.equal(
      (await runtime.executePlan({ version: '2.0', steps: [step] })).status,
      'completed',
    );
    const loose = { ...step, version: '2.0.0', bounds: undefined, extra: true };
    assert.equal(
      (await runtime.executePlan({ version: '1.0', steps: [loose] })).status,
      'completed',
    );
  });

  it('refuses a 2.0 input field a field record does not declare: UNDECLARED_INPUT_FIELD with the name meant', async () => {
    const error = await rejection(() =>
      runtime.executePlan({
        version: '2.0',
        steps: [
          { id: 'a', capability: fieldsName, input: { to: 'x', extra: true, 'a.c': 1, tx: 2 } },
        ],
      }),
    );
    assert.deepEqual(
      error.issues.map(({ code, path, hint, field }) => ({ code, path, hint, field })),
      [
        {
          code: 'UNDECLARED_INPUT_FIELD',
          path: '/steps/0/input/extra',
          hint: 'declared fields: "to", "a.b"',
          field: 'input.extra',
        },
        {
          code: 'UNDECLARED_INPUT_FIELD',
          path: '/steps/0/input/a.c',
          hint: 'did you mean "a.b"?',
          field: 'input.a.c',
        },
        {
          code: 'UNDECLARED_INPUT_FIELD',
          path: '/steps/0/input/tx',
          hint: 'did you mean "to"?',
          field: 'input.tx',
        },
      ],
    );
    // 1.0 ignores undeclared fields, as before; a capability without fields is never checked.
    const loose = { id: 'a', capability: fieldsName, input: { to: 'x', extra: true } };
    assert.equal(
      (await runtime.executePlan({ version: '1.0', steps: [loose] })).status,
      'completed',
    );
    const free = { id: 'a', capability: bareName, input: { anything: true } };
    assert.equal(
      (await runtime.executePlan({ version: '2.0', steps: [free] })).status,
      'completed',
    );
  });

  it('suggests "steps" for "step" and "version" for "Version", in 1.0 and 2.0', async () => {
    const error = await rejection(() =>
      runtime.executePlan({
        Version: '2.0',
        step: [{ id: 'a', capability: bareName }],
      } as never),
    );
    assert.deepEqual(
      error.issues.map(({ code, path, hint }) => ({ code, path, hint })),
      [
        {
          code: 'UNSUPPORTED_PLAN_VERSION',
          path: '/version',
          hint: 'did you mean "version" instead of "Version"?',
        },
        {
          code: 'INVALID_PLAN',
          path: '/steps',
          hint: 'did you mean "steps" instead of "step"?',
        },
      ],
    );
    assert.match(
      error.message,
      /steps must be an array, got undefined; did you mean "steps" instead of "step"\?/,
    );
    const v1 = await rejection(() => runtime.executePlan({ version: '1.0', step: [] } as never));
    assert.equal(v1.issues[0]?.hint, 'did you mean "steps" instead of "step"?');
  });

  it('gives every issue a JSON pointer into the plan, in 1.0 too: steps, fields, references, ~ and / escaped', async () => {
    const error = await rejection(() =>
      runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: fieldsName, input: { to: 1 } },
          { id: 'a', capability: `${fieldsName}x`, input: { to: { $ref: 'steps.z.result' } } },
          { id: 'c', capability: bareName, input: { 'x/y~z': [{ $ref: 'nope' }] } },
          7,
        ],
      } as never),
    );
    assert.deepEqual(
      error.issues.map(({ code, path }) => [code, path]),
      [
        ['INPUT_TYPE_MISMATCH', '/steps/0/input/to'],
        ['DUPLICATE_STEP_ID', '/steps/1/id'],
        ['UNKNOWN_CAPABILITY', '/steps/1/capability'],
        ['RESULT_REFERENCE_NOT_EARLIER', '/steps/1/input/to'],
        ['INVALID_RESULT_REFERENCE', '/steps/2/input/x~1y~0z/0'],
        ['INVALID_PLAN', '/steps/3'],
      ],
    );
    assert.equal(error.issues[2]?.hint, `did you mean "${fieldsName}"?`);
    const notObject = await rejection(() => runtime.executePlan(null as never));
    assert.equal(notObject.issues[0]?.path, '');
  });
});

describe('bounds of 2.0 steps (docs/api.md, "Bounds")', () => {
  const authorizer = recordingAuthorizer();
  const runtime = runtimeWith({ authorizer, planVersions: ['1.0', '2.0'] });
  let invoked = 0;
  const [fields, bare] = register(
    runtime,
    {
      inputSchema: {
        amount: { type: 'number', required: true, description: 'how much' },
        to: { type: 'string', required: false, description: 'recipient' },
        lines: { type: 'array', required: false, description: 'invoice lines' },
        meta: { type: 'object', required: false, description: 'anything' },
      },
      execute: () => invoked++,
    },
    { execute: () => invoked++ },
  ) as [string, string];

  const plan = (bounds: unknown, version = '2.0', capability = fields) => ({
    version,
    steps: [{ id: 'pay', capability, input: { amount: 5 }, bounds }],
  });

  /** The BOUNDS_INVALID issues of a refused plan, as code, path and hint. */
  async function refused(
    bounds: unknown,
    version?: string,
  ): Promise<{ code: string; path: string; hint?: string; message: string }[]> {
    const error = await rejection(() => runtime.executePlan(plan(bounds, version) as never));
    return error.issues.map(({ code, path, hint, message }) => ({
      code,
      path,
      message,
      ...(hint !== undefined && { hint }),
    }));
  }

  it('admits every keyword of the subset, nested ones included, and records the bounds with the step', async () => {
    const bounds = {
      amount: {
        type: ['number', 'null'],
        minimum: 0,
        exclusiveMinimum: -1,
        maximum: 100,
        exclusiveMaximum: 101,
        enum: [5, 10],
      },
      to: { type: 'string', minLength: 3, maxLength: 80, pattern: '^[a-z]+@example\\.com$' },
      lines: {
        maxItems: 3,
        items: {
          type: 'object',
          required: ['sku'],
          properties: { sku: { const: 'A-1' }, qty: { type: 'integer', maximum: 9 } },
        },
      },
      meta: {},
    };
    const before = invoked;
    const job = await runtime.executePlan(plan(bounds) as never);
    assert.equal(job.status, 'completed');
    assert.equal(invoked, before + 1);
    assert.deepEqual(job.steps[0]?.bounds, bounds);
    const stored = await runtime.getJob(job.id);
    assert.deepEqual(stored?.steps[0]?.bounds, bounds);
    assert.equal((await runtime.verifyJob(job.id))?.ok, true);
  });

  it('refuses each keyword outside the subset, with the keyword meant as hint', async () => {
    for (const keyword of [
      'minItems',
      'format',
      'anyOf',
      '$ref',
      'additionalProperties',
      'multipleOf',
      'uniqueItems',
    ]) {
      const [issue, ...more] = await refused({ amount: { [keyword]: 1 } });
      assert.deepEqual(more, [], keyword);
      assert.equal(issue?.code, 'BOUNDS_INVALID', keyword);
      assert.equal(issue?.path, `/steps/0/bounds/amount/${keyword.replace('/', '~1')}`, keyword);
      assert.match(issue?.message ?? '', /is not a bound keyword/, keyword);
    }
    const [misspelled] = await refused({ amount: { maximun: 100 } });
    assert.deepEqual(misspelled, {
      code: 'BOUNDS_INVALID',
      path: '/steps/0/bounds/amount/maximun',
      hint: 'did you mean "maximum"?',
      message:
        'steps[0] "pay": bounds.amount.maximun: "maximun" is not a bound keyword; did you mean "maximum"?',
    });
    // Nested bounds are judged as deeply.
    const [nested] = await refused({ lines: { items: { properties: { sku: { format: 'x' } } } } });
    assert.equal(nested?.path, '/steps/0/bounds/lines/items/properties/sku/format');
  });

  it('refuses keyword values of the wrong type, every one reported', async () => {
    const issues = await refused({
      amount: {
        type: 'decimal',
        enum: [],
        minimum: '0',
        exclusiveMinimum: null,
        maximum: [100],
        exclusiveMaximum: {},
        minLength: -1,
        maxLength: 1.5,
        maxItems: '3',
      },
      to: { pattern: 42, type: [] },
      lines: { items: [{}], required: ['a', 'a'] },
      meta: { properties: [], required: 'a' },
    });
    assert.deepEqual(
      issues.map((issue) => [issue.code, issue.path]),
      [
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/enum'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/exclusiveMaximum'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/exclusiveMinimum'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/maxItems'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/maxLength'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/maximum'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/minLength'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/minimum'],
        ['BOUNDS_INVALID', '/steps/0/bounds/amount/type'],
        ['BOUNDS_INVALID', '/steps/0/bounds/lines/items'],
        ['BOUNDS_INVALID', '/steps/0/bounds/lines/required'],
        ['BOUNDS_INVALID', '/steps/0/bounds/meta/properties'],
        ['BOUNDS_INVALID', '/steps/0/bounds/meta/required'],
        ['BOUNDS_INVALID', '/steps/0/bounds/to/pattern'],
        ['BOUNDS_INVALID', '/steps/0/bounds/to/type'],
      ],
    );
    for (const bad of [[], 'amount', 3, null, { amount: 'max 100' }, { amount: [] }]) {
      const [issue] = await refused(bad);
      assert.equal(issue?.code, 'BOUNDS_INVALID', JSON.stringify(bad));
    }
  });

  it('refuses an unsafe pattern, a pattern over 1,000 characters and one that is no regular expression', async () => {
    const [unsafe] = await refused({ to: { pattern: '(a+)+$' } });
    assert.equal(unsafe?.code, 'BOUNDS_INVALID');
    assert.equal(unsafe?.path, '/steps/0/bounds/to/pattern');
    assert.match(unsafe?.message ?? '', /unsafe by safe-regex2/);
    const [long] = await refused({ to: { pattern: 'a'.repeat(1_001) } });
    assert.match(long?.message ?? '', /is 1001 characters; a pattern has at most 1000/);
    const [broken] = await refused({ to: { pattern: '[' } });
    assert.match(broken?.message ?? '', /is not a regular expression/);
    // 1,000 characters is still a pattern.
    const job = await runtime.executePlan(plan({ to: { pattern: 'a'.repeat(1_000) } }) as never);
    assert.equal(job.status, 'completed');
  });

  it('refuses a bound on a field the capability does not declare, naming the field meant', async () => {
    assert.deepEqual(await refused({ ammount: { maximum: 1 }, zzz: {} }), [
      {
        code: 'BOUNDS_INVALID',
        path: '/steps/0/bounds/ammount',
        hint: 'did you mean "amount"?',
        message:
          'steps[0] "pay": bounds.ammount: "ammount" is not an input field of this capability; did you mean "amount"?',
      },
      {
        code: 'BOUNDS_INVALID',
        path: '/steps/0/bounds/zzz',
        hint: 'declared fields: "amount", "to", "lines", "meta"',
        message:
          'steps[0] "pay": bounds.zzz: "zzz" is not an input field of this capability; declared fields: "amount", "to", "lines", "meta"',
      },
    ]);
    // A capability without fields takes bounds on any field.
    const job = await runtime.executePlan(plan({ anything: { maximum: 1 } }, '2.0', bare) as never);
    assert.equal(job.status, 'completed');
  });

  it('refuses bounds in a 1.0 plan, and says only UNSUPPORTED_PLAN_VERSION of a 2.0 plan the runtime does not admit', async () => {
    assert.deepEqual(await refused({ amount: { maximum: 1 } }, '1.0'), [
      {
        code: 'BOUNDS_INVALID',
        path: '/steps/0/bounds',
        hint: 'use plan version "2.0", or drop bounds',
        message: 'steps[0] "pay": bounds need plan version "2.0"',
      },
    ]);
    const old = runtimeWith({ authorizer });
    const error = await rejection(() => old.executePlan(plan({ amount: {} }) as never));
    assert.deepEqual(
      error.issues.map((issue) => issue.code),
      ['UNSUPPORTED_PLAN_VERSION'],
    );
  });

  it('copies bounds once, frozen, and refuses bounds outside plain data (a getter, a Date) without running them', async () => {
    let reads = 0;
    const hostile = {
      amount: {
        get maximum() {
          reads++;
          return 1;
        },
      },
    };
    const [getter] = await refused(hostile);
    assert.equal(getter?.code, 'BOUNDS_INVALID');
    assert.equal(getter?.path, '/steps/0/bounds/amount/maximum');
    assert.equal(reads, 0);
    const [date] = await refused({ amount: { const: new Date(0) } });
    assert.equal(date?.path, '/steps/0/bounds/amount/const');
    // Nested deeper than the value domain allows.
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < 200; level++) deep = { items: deep };
    const [tooDeep] = await refused({ lines: deep });
    assert.equal(tooDeep?.code, 'BOUNDS_INVALID');
    // What the job keeps is the runtime's copy: later edits to the caller's object change nothing.
    const bounds = { amount: { maximum: 100 } };
    const step = { id: 'pay', capability: fields, input: { amount: 5 }, bounds };
    const job = await runtime.executePlan({ version: '2.0', steps: [step] });
    bounds.amount.maximum = 1;
    assert.deepEqual(job.steps[0]?.bounds, { amount: { maximum: 100 } });
    assert.ok(Object.isFrozen(job.steps[0]?.bounds));
    assert.notEqual(job.steps[0]?.bounds, step.bounds);
  });
});
