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

  it('admits every step field in 2.0 (bounds is left to plan warrants) and any key in 1.0, as before', async () => {
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
