// OpenTelemetry spans of jobs and steps (docs/api.md, "OpenTelemetry"; docs/decisions.md,
// "Telemetry"): names, parenting, attributes, statuses, and no span work without a provider.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  context,
  createContextKey,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  OperatorRuntime,
  cedarAuthorizer,
  type CapabilityAuthorizationContext,
  type PlanApprovalRequest,
  type ExecutionAuthorizer,
  type Job,
} from '../../src/index.js';
import { runtimeOnStore } from '../../src/runtime/operator-runtime.js';
import { register } from '../support/runtime-fixtures.js';
import { stepRequests } from '../support/step-requests.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();
const outside = trace.getTracer('test');
const allowAll: ExecutionAuthorizer = { authorize: () => ({ decision: 'allow' }) };

function registerProvider(): void {
  assert.ok(trace.setGlobalTracerProvider(provider), 'the test registers the only provider');
}

before(() => {
  context.setGlobalContextManager(contextManager.enable());
  registerProvider();
});
after(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((span) => span.name === name);
const only = (name: string): ReadableSpan => {
  const found = named(name);
  assert.equal(found.length, 1, `one span ${name}, got ${spans().map((span) => span.name)}`);
  return found[0] as ReadableSpan;
};
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan | Span): string => span.spanContext().spanId;

/** Runs `body` inside an active span of the test's own tracer; returns both. */
async function under<T>(name: string, body: () => Promise<T>): Promise<[T, Span]> {
  return outside.startActiveSpan(name, async (span) => {
    try {
      const value: T = await body();
      const ran: [T, Span] = [value, span];
      return ran;
    } finally {
      span.end();
    }
  });
}

describe('telemetry with a tracer provider', () => {
  it('a warrant.job span child of the active context, an execute_tool span per step with every attribute and neither inputs nor results', async () => {
    const runtime = new OperatorRuntime({ authorizer: allowAll });
    const activeInStep: (string | undefined)[] = [];
    const [fetch, save] = register(
      runtime,
      {
        execute: () => {
          activeInStep.push(trace.getActiveSpan()?.spanContext().spanId);
          return { value: 'SECRET-RESULT' };
        },
      },
      { version: '2.1.0', risk: 'write', execute: ({ input }) => ({ saved: input }) },
    ) as [string, string];
    const [job, caller] = await under('caller', () =>
      runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'fetch', capability: fetch, input: { token: 'SECRET-INPUT' } },
          { id: 'save', capability: save, input: { v: { $ref: 'steps.fetch.result.value' } } },
        ],
      }),
    );
    assert.equal(job.status, 'completed');
    assert.deepEqual(
      spans().map((span) => span.name),
      [`execute_tool ${fetch}`, `execute_tool ${save}`, 'warrant.job', 'caller'],
    );
    const jobSpan = only('warrant.job');
    assert.equal(parentOf(jobSpan), idOf(caller));
    assert.equal(jobSpan.spanContext().traceId, caller.spanContext().traceId);
    assert.equal(jobSpan.kind, SpanKind.INTERNAL);
    assert.deepEqual(jobSpan.attributes, {
      'warrant.job.id': job.id,
      'warrant.job.status': 'completed',
    });
    assert.equal(jobSpan.status.code, SpanStatusCode.UNSET);
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string })
      .version;
    assert.deepEqual(
      { name: jobSpan.instrumentationScope.name, version: jobSpan.instrumentationScope.version },
      { name: 'warrant', version },
    );

    const [first, second] = [only(`execute_tool ${fetch}`), only(`execute_tool ${save}`)];
    for (const [span, step, name, capabilityVersion, risk] of [
      [first, job.steps[0], fetch, '1.0.0', 'read'],
      [second, job.steps[1], save, '2.1.0', 'write'],
    ] as const) {
      assert.equal(parentOf(span), idOf(jobSpan));
      assert.equal(span.kind, SpanKind.INTERNAL);
      assert.equal(span.status.code, SpanStatusCode.UNSET);
      assert.deepEqual(span.attributes, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.call.id': `${job.id}:${step?.id}`,
        'warrant.job.id': job.id,
        'warrant.step.id': step?.id,
        'warrant.capability.version': capabilityVersion,
        'warrant.capability.risk': risk,
        'warrant.decision.outcome': 'allow',
        'warrant.input.digest': step?.decision?.inputDigest,
        'warrant.step.status': 'completed',
      });
    }
    // The capability runs inside its step's span: its own spans nest under it.
    assert.deepEqual(activeInStep, [idOf(first)]);
    const everything = JSON.stringify(spans().map((span) => [span.attributes, span.status]));
    assert.doesNotMatch(everything, /SECRET/);
  });

  it('the job span names who the job runs for: the subject, and the actor and chain when an agent acts for it', async () => {
    const runtime = new OperatorRuntime({ authorizer: allowAll });
    try {
      const [read] = register(runtime, { execute: () => 1 }) as [string];
      const plan = { version: '1.0' as const, steps: [{ id: 's', capability: read }] };
      const acting = await runtime.executePlan(plan, {
        caller: { id: 'ada', actor: { id: 'assistant', actor: { id: 'planner' } } },
      });
      assert.deepEqual(only('warrant.job').attributes, {
        'warrant.job.id': acting.id,
        'warrant.subject.id': 'ada',
        'warrant.actor.id': 'assistant',
        'warrant.actor.chain': ['assistant', 'planner'],
        'warrant.job.status': 'completed',
      });
      exporter.reset();
      const alone = await runtime.executePlan(plan, { caller: { id: 'ada' } });
      assert.deepEqual(only('warrant.job').attributes, {
        'warrant.job.id': alone.id,
        'warrant.subject.id': 'ada',
        'warrant.job.status': 'completed',
      });
    } finally {
      await runtime.close();
    }
  });

  it('a denied step: ERROR with error.type denied and the reason; the job span fails with it; steps never run have no span', async () => {
    const runtime = new OperatorRuntime({
      authorizer: {
        authorize: (asked: CapabilityAuthorizationContext) =>
          asked.capability.risk === 'read'
            ? { decision: 'allow' }
            : { decision: 'deny', reason: 'no writes today' },
      },
    });
    const [read, write] = register(
      runtime,
      { execute: () => 1 },
      { risk: 'write', execute: () => 2 },
    );
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'a', capability: read as string },
        { id: 'b', capability: write as string, input: { x: 1 } },
        { id: 'c', capability: read as string },
      ],
    });
    assert.equal(job.status, 'failed');
    assert.deepEqual(
      spans().map((span) => `${span.name} ${span.attributes['warrant.step.id'] ?? ''}`),
      [`execute_tool ${read} a`, `execute_tool ${write} b`, 'warrant.job '],
    );
    const denied = only(`execute_tool ${write}`);
    assert.equal(denied.status.code, SpanStatusCode.ERROR);
    assert.equal(denied.status.message, undefined);
    assert.equal(denied.attributes['error.type'], 'denied');
    assert.equal(denied.attributes['warrant.step.status'], 'denied');
    assert.equal(denied.attributes['warrant.decision.outcome'], 'deny');
    assert.equal(denied.attributes['warrant.decision.reason'], 'no writes today');
    assert.equal(denied.attributes['warrant.input.digest'], job.steps[1]?.decision?.inputDigest);
    const jobSpan = only('warrant.job');
    assert.equal(jobSpan.status.code, SpanStatusCode.ERROR);
    assert.equal(jobSpan.attributes['error.type'], 'denied');
    assert.equal(jobSpan.attributes['warrant.job.status'], 'failed');
  });

  it('a Cedar decision: warrant.decision.policies names the determining policies; other authorizers give none', async () => {
    const runtime = new OperatorRuntime({
      authorizer: cedarAuthorizer({
        policies:
          '@id("reads") permit(principal, action in Warrant::Action::"risk:read", resource);\npermit(principal, action, resource);',
      }),
    });
    const [read] = register(runtime, { execute: () => 1 });
    await runtime.executePlan({ version: '1.0', steps: [{ id: 'a', capability: read as string }] });
    const step = only(`execute_tool ${read}`);
    assert.deepEqual(step.attributes['warrant.decision.policies'], ['reads', 'policy1']);
    exporter.reset();
    const plain = new OperatorRuntime();
    const [other] = register(plain, { execute: () => 1 });
    await plain.executePlan({ version: '1.0', steps: [{ id: 'a', capability: other as string }] });
    assert.equal(only(`execute_tool ${other}`).attributes['warrant.decision.policies'], undefined);
    await Promise.all([runtime.close(), plain.close()]);
  });

  it('a limit denial: warrant.decision.limit names the limit, the reason its text', async () => {
    const runtime = new OperatorRuntime({
      limits: [{ name: 'none', per: 'global', max: 0, windowMs: 1_000 }],
    });
    const [read] = register(runtime, { execute: () => 1 });
    await runtime.executePlan({ version: '1.0', steps: [{ id: 'a', capability: read as string }] });
    const step = only(`execute_tool ${read}`);
    assert.equal(step.attributes['error.type'], 'denied');
    assert.equal(step.attributes['warrant.decision.outcome'], 'deny');
    assert.equal(step.attributes['warrant.decision.reason'], 'limit none: 1/0 in 1s');
    assert.equal(step.attributes['warrant.decision.limit'], 'none');
    await runtime.close();
  });

  it('a failed step: ERROR, error.type naming where it failed, decision attributes when one was made', async () => {
    const cases: {
      readonly name: string;
      readonly authorize: () => unknown;
      readonly input: unknown;
      readonly errorType: string;
      readonly outcome?: string;
      readonly reason?: string;
    }[] = [
      {
        name: 'capability throws',
        authorize: () => ({ decision: 'allow' }),
        input: { n: 1, fail: true },
        errorType: 'capability_error',
        outcome: 'allow',
      },
      {
        name: 'authorizer throws',
        authorize: () => {
          throw new Error('policy engine down');
        },
        input: { n: 1 },
        errorType: 'authorizer_error',
        outcome: 'error',
        reason: 'policy engine down',
      },
      {
        name: 'malformed decision',
        authorize: () => ({ decision: 'maybe' }),
        input: { n: 1 },
        errorType: 'invalid_decision',
        outcome: 'invalid',
      },
      {
        name: 'input invalid once resolved',
        authorize: () => ({ decision: 'allow' }),
        input: { n: { $ref: 'steps.p.result.text' } },
        errorType: 'input_rejected',
      },
    ];
    for (const { name, authorize, input, errorType, outcome, reason } of cases) {
      exporter.reset();
      const runtime = new OperatorRuntime({
        authorizer: {
          authorize: (asked) =>
            (asked.stepId === 's' ? authorize() : { decision: 'allow' }) as never,
        },
      });
      const [previous, capability] = register(
        runtime,
        { execute: () => ({ text: 'a' }) },
        {
          inputSchema: { n: { type: 'number', required: true, description: 'n' } },
          execute: ({ input: given }) => {
            if ((given as { fail?: boolean }).fail) throw new Error('broken');
            return 1;
          },
        },
      );
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [
          { id: 'p', capability: previous as string },
          { id: 's', capability: capability as string, input },
        ],
      });
      assert.equal(job.status, 'failed', name);
      const span = only(`execute_tool ${capability}`);
      assert.equal(span.status.code, SpanStatusCode.ERROR, name);
      assert.equal(span.attributes['error.type'], errorType, name);
      assert.equal(span.attributes['warrant.step.status'], 'failed', name);
      assert.equal(span.attributes['warrant.decision.outcome'], outcome, name);
      assert.equal(span.attributes['warrant.decision.reason'], reason, name);
      assert.equal(
        span.attributes['warrant.input.digest'],
        job.steps[1]?.decision?.inputDigest,
        name,
      );
      assert.equal(only('warrant.job').attributes['error.type'], errorType, name);
    }
  });

  it('awaiting approval: the step span says so without an error; the approved run is a new job span under the approver’s context', async () => {
    const runtime = new OperatorRuntime({
      approvals: { approver: { canApprove: () => true } },
      authorizer: {
        authorize: (asked: CapabilityAuthorizationContext) =>
          asked.approval === undefined
            ? { decision: 'require_approval', reason: 'a human must look' }
            : { decision: 'allow' },
      },
    });
    const [write] = register(runtime, { risk: 'write', execute: () => 'written' });
    const plan = { version: '1.0' as const, steps: [{ id: 'w', capability: write as string }] };
    const job = await runtime.executePlan(plan, { caller: { id: 'alice' } });
    assert.equal(job.status, 'awaiting_approval');
    const waiting = only(`execute_tool ${write}`);
    assert.equal(waiting.status.code, SpanStatusCode.UNSET);
    assert.equal(waiting.attributes['error.type'], undefined);
    assert.equal(waiting.attributes['warrant.step.status'], 'awaiting_approval');
    assert.equal(waiting.attributes['warrant.decision.outcome'], 'approval_required');
    assert.equal(waiting.attributes['warrant.decision.reason'], 'a human must look');
    const firstRun = only('warrant.job');
    assert.equal(firstRun.attributes['warrant.job.status'], 'awaiting_approval');
    assert.equal(firstRun.status.code, SpanStatusCode.UNSET);

    exporter.reset();
    const [request] = stepRequests(await runtime.listApprovals());
    const [done, approver] = await under('approver', () =>
      runtime.decideApproval({
        jobId: job.id,
        stepId: 'w',
        inputDigest: request?.inputDigest ?? '',
        approver: { id: 'bob' },
        decision: 'approve',
      }),
    );
    assert.equal((done as Job).status, 'completed');
    const resumed = only('warrant.job');
    assert.equal(parentOf(resumed), idOf(approver));
    assert.equal(resumed.attributes['warrant.job.id'], job.id);
    assert.equal(resumed.attributes['warrant.job.status'], 'completed');
    const ran = only(`execute_tool ${write}`);
    assert.equal(parentOf(ran), idOf(resumed));
    assert.equal(ran.attributes['gen_ai.tool.call.id'], `${job.id}:w`);
    assert.equal(ran.attributes['warrant.decision.outcome'], 'allow');
    assert.equal(ran.attributes['warrant.step.status'], 'completed');
  });

  it('a step run under a plan grant: warrant.approval.kind plan; a step approved on its own has none', async () => {
    const runtime = new OperatorRuntime({
      approvals: { approver: { canApprove: () => true } },
      authorizer: {
        authorize: (asked: CapabilityAuthorizationContext) =>
          asked.approval === undefined
            ? { decision: 'require_approval', reason: 'a human must look' }
            : { decision: 'allow' },
      },
    });
    const [write] = register(runtime, { risk: 'write', execute: () => 'written' });
    const plan = { version: '1.0' as const, steps: [{ id: 'w', capability: write as string }] };
    const job = await runtime.executePlan(plan, { caller: { id: 'alice' }, approval: 'plan' });
    const [request] = (await runtime.listApprovals()) as PlanApprovalRequest[];
    exporter.reset();
    const done = await runtime.decideApproval({
      kind: 'plan',
      jobId: job.id,
      planDigest: request?.planDigest ?? '',
      approver: { id: 'bob' },
      decision: 'approve',
    });
    assert.equal(done.status, 'completed');
    const ran = only(`execute_tool ${write}`);
    assert.equal(ran.attributes['warrant.approval.kind'], 'plan');
    assert.equal(ran.attributes['warrant.decision.outcome'], 'allow');
    exporter.reset();
    await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'r', capability: write as string }],
    });
    assert.equal(only(`execute_tool ${write}`).attributes['warrant.approval.kind'], undefined);
  });

  it('a store fault: the spans end with ERROR and error.type JOB_STORE_FAILED, and the job still rejects', async () => {
    let writes = 0;
    const store = {
      create() {},
      update() {
        writes++;
        if (writes === 1) throw new Error('disk full');
      },
      get: () => undefined,
      list: () => [],
      close() {},
    };
    const runtime = runtimeOnStore(store as never, { authorizer: allowAll });
    const [capability] = register(runtime, { execute: () => 1 });
    await assert.rejects(
      runtime.executePlan({
        version: '1.0',
        steps: [{ id: 's', capability: capability as string }],
      }),
      { code: 'JOB_STORE_FAILED' },
    );
    for (const span of [only(`execute_tool ${capability}`), only('warrant.job')]) {
      assert.equal(span.status.code, SpanStatusCode.ERROR);
      assert.equal(span.attributes['error.type'], 'JOB_STORE_FAILED');
    }
  });
});

describe('telemetry without a recording provider', () => {
  const key = createContextKey('test.marker');

  async function runMarked(runtime: OperatorRuntime, capability: string) {
    return context.with(ROOT_CONTEXT.setValue(key, 'caller'), () =>
      runtime.executePlan({ version: '1.0', steps: [{ id: 's', capability }] }),
    );
  }

  it('no provider: no span, the capability runs in the caller’s context; a provider registered later is used', async () => {
    const runtime = new OperatorRuntime({ authorizer: allowAll });
    const seen: unknown[] = [];
    const [capability] = register(runtime, {
      execute: () => {
        seen.push([context.active().getValue(key), trace.getActiveSpan()]);
        return 1;
      },
    });
    trace.disable();
    try {
      const job = await runMarked(runtime, capability as string);
      assert.equal(job.status, 'completed');
      assert.deepEqual(seen, [['caller', undefined]]);
      assert.deepEqual(spans(), []);
    } finally {
      registerProvider();
    }
    await runMarked(runtime, capability as string);
    assert.deepEqual(
      spans().map((span) => span.name),
      [`execute_tool ${capability}`, 'warrant.job'],
    );
  });

  it('a provider that samples nothing: no span work, the caller’s context as is', async () => {
    const runtime = new OperatorRuntime({ authorizer: allowAll });
    const seen: unknown[] = [];
    const [capability] = register(runtime, {
      execute: () => {
        seen.push([context.active().getValue(key), trace.getActiveSpan()]);
        return 1;
      },
    });
    const sampledOut = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    trace.disable();
    trace.setGlobalTracerProvider(sampledOut);
    try {
      await runMarked(runtime, capability as string);
    } finally {
      trace.disable();
      registerProvider();
    }
    assert.deepEqual(seen, [['caller', undefined]]);
    assert.deepEqual(spans(), []);
  });
});
