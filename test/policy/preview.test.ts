// docs/api.md, "runtime.previewPlan": each step's decision without running anything.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cedarAuthorizer, isPlanAdmissionError } from '../../src/index.js';
import {
  recordEvents,
  recordingAuthorizer,
  register,
  runtimeWith,
} from '../support/runtime-fixtures.js';

describe('runtime.previewPlan', () => {
  it('asks the authorizer about each step without references, with preview: true and no job id; runs and records nothing', async () => {
    const authorizer = recordingAuthorizer((asked) =>
      asked.capability.risk === 'read' ? { decision: 'allow' } : { decision: 'deny', reason: 'no' },
    );
    const runtime = runtimeWith({ authorizer, store: 'memory' });
    let ran = 0;
    const [read, write] = register(
      runtime,
      { execute: () => ++ran },
      { risk: 'write', execute: () => ++ran },
    );
    const events = recordEvents(runtime);
    const preview = await runtime.previewPlan(
      {
        version: '1.0',
        steps: [
          { id: 'a', capability: read as string, input: { n: 1 } },
          { id: 'b', capability: write as string, input: { n: 2 } },
        ],
      },
      { caller: { id: 'alice' } },
    );
    assert.deepEqual(preview, {
      steps: [
        { id: 'a', capability: read, outcome: 'allow' },
        { id: 'b', capability: write, outcome: 'deny', reason: 'no' },
      ],
    });
    assert.equal(ran, 0);
    assert.deepEqual(events, []);
    assert.deepEqual(await runtime.listJobs(), []);
    const [first] = authorizer.calls;
    assert.equal(first?.jobId, '');
    assert.equal(first?.preview, true);
    assert.equal(first?.stepId, 'a');
    assert.deepEqual(first?.caller, { id: 'alice' });
    assert.match(first?.inputDigest ?? '', /^sha256:[0-9a-f]{64}$/);
    await runtime.close();
  });

  it('marks steps with references unknown, naming the steps they wait on in plan order', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [cap] = register(runtime, { execute: () => ({ v: 1 }) });
    const name = cap as string;
    const preview = await runtime.previewPlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: name, input: {} },
        { id: 'b', capability: name, input: {} },
        {
          id: 'c',
          capability: name,
          input: {
            x: { $ref: 'steps.b.result.v' },
            y: [{ $ref: 'steps.a.result' }, { $ref: 'steps.b.result' }],
          },
        },
      ],
    });
    assert.deepEqual(preview.steps[2], {
      id: 'c',
      capability: name,
      outcome: 'unknown',
      waitsFor: ['a', 'b'],
    });
    assert.deepEqual(
      authorizer.calls.map((asked) => asked.stepId),
      ['a', 'b'],
    );
    await runtime.close();
  });

  it('adds the determining policies of a Cedar decision', async () => {
    const runtime = runtimeWith({
      approvals: { approver: { canApprove: () => true } },
      authorizer: cedarAuthorizer({
        policies:
          '@id("ask") @warrant("require_approval") permit(principal, action in Warrant::Action::"risk:write", resource);\n' +
          '@id("reads") permit(principal, action in Warrant::Action::"risk:read", resource) when { context.jobId == "" };',
      }),
    });
    const [read, write] = register(
      runtime,
      { execute: () => 1 },
      { risk: 'write', execute: () => 2 },
    );
    const preview = await runtime.previewPlan({
      version: '1.0',
      steps: [
        { id: 'r', capability: read as string },
        { id: 'w', capability: write as string },
      ],
    });
    assert.deepEqual(preview.steps, [
      { id: 'r', capability: read, outcome: 'allow', policies: ['reads'] },
      {
        id: 'w',
        capability: write,
        outcome: 'require_approval',
        reason: 'Approval required by policy ask',
        policies: ['ask'],
      },
    ]);
    await runtime.close();
  });

  it('reports input its contract refuses, an authorizer that throws or answers badly', async () => {
    const runtime = runtimeWith({
      authorizer: recordingAuthorizer((asked) => {
        if (asked.stepId === 'boom') throw new Error('authorizer down');
        return asked.stepId === 'odd' ? { decision: 'maybe' } : { decision: 'allow' };
      }),
    });
    const [typed, plain] = register(
      runtime,
      {
        // An asynchronous Standard Schema is checked at the step, after admission.
        inputSchema: {
          '~standard': {
            version: 1,
            vendor: 'test',
            validate: () => Promise.resolve({ issues: [{ message: 'never valid' }] }),
          },
        } as never,
        execute: () => 1,
      },
      { execute: () => 1 },
    );
    const preview = await runtime.previewPlan({
      version: '1.0',
      steps: [
        { id: 'bad', capability: typed as string, input: { n: 'x' } },
        { id: 'boom', capability: plain as string },
        { id: 'odd', capability: plain as string },
      ],
    });
    assert.deepEqual(
      preview.steps.map((step) => [step.id, step.outcome]),
      [
        ['bad', 'input_rejected'],
        ['boom', 'error'],
        ['odd', 'invalid'],
      ],
    );
    assert.equal(preview.steps[0]?.reason, 'Input validation failed: input: never valid');
    assert.equal(preview.steps[1]?.reason, 'authorizer down');
    await runtime.close();
  });

  it('rejects a plan admission refuses, as executePlan does', async () => {
    const runtime = runtimeWith();
    await assert.rejects(
      runtime.previewPlan({
        version: '1.0',
        steps: [{ id: 'a', capability: 'no.such.capability' }],
      }),
      isPlanAdmissionError,
    );
    await runtime.close();
  });
});
