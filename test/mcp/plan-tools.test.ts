// The plan tools (planTools: true; issue 48, docs/api.md "new McpAdapter") through a
// real MCP client (@modelcontextprotocol/client) over the SDK's in-memory transport pair:
// warrant_preview_plan and warrant_submit_plan as a model sees them, and what the runtime did.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import {
  McpAdapter,
  OperatorRuntime,
  type CapabilityDescriptor,
  type ExecutionCaller,
} from '../../src/index.js';
import {
  PLAN_TOOLS,
  PREVIEW_PLAN_TOOL,
  SUBMIT_PLAN_TOOL,
  readPlanToolArgs,
} from '../../src/mcp/plan-tools.js';
import { register } from '../support/runtime-fixtures.js';
import { stepRequests } from '../support/step-requests.js';

const closing: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closing) await close();
});

async function connect(adapter: McpAdapter): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await adapter.connect(serverTransport);
  const client = new Client({ name: 'warrant-plan-tools-test', version: '1.0.0' });
  await client.connect(clientTransport);
  closing.push(async () => {
    await client.close();
    await adapter.close();
  });
  return client;
}

type Json = Record<string, unknown>;

describe('warrant_preview_plan and warrant_submit_plan (planTools)', () => {
  const runtime = new OperatorRuntime({
    planVersions: ['1.0', '2.0'],
    approvals: { approver: { canApprove: () => true } },
  });
  closing.push(() => runtime.close());
  const [lookup, send, hidden] = register(
    runtime,
    {
      description: 'Finds a user',
      inputSchema: { user: { type: 'string', required: true, description: 'The user' } },
      execute: ({ input }) => ({ email: `${(input as { user: string }).user}@example.com` }),
    },
    {
      risk: 'write',
      description: 'Sends mail',
      inputSchema: { to: { type: 'string', required: true, description: 'Recipient' } },
      execute: () => ({ sent: true }),
    },
    { description: 'Not served', execute: () => 'hidden' },
  ) as [string, string, string];
  // The same capabilities, and only them: the registry is this process's.
  const served = (descriptor: CapabilityDescriptor) =>
    descriptor.name === lookup || descriptor.name === send;
  let caller: ExecutionCaller | undefined = { id: 'ada', tenant: 't1' };
  const adapter = new McpAdapter(runtime, {
    include: served,
    planTools: true,
    jobTools: true,
    resolveCaller: () => caller,
  });
  const ready = connect(adapter);
  const call = async (name: string, args: Json) =>
    (await (await ready).callTool({ name, arguments: args })) as CallToolResult;
  const plan = {
    version: '2.0',
    goal: 'Mail ada',
    steps: [
      { id: 'who', capability: lookup, input: { user: 'ada' } },
      { id: 'mail', capability: send, input: { to: { $ref: 'steps.who.result.email' } } },
    ],
  };

  it('lists both tools after the capabilities, the plan schema as their plan property', async () => {
    const { tools } = await (await ready).listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      [lookup.replaceAll('.', '_'), send.replaceAll('.', '_'), 'warrant_job_status', ...PLAN_TOOLS],
    );
    // Its $defs at the tool schema's root, where its pointers (#/$defs/...) resolve.
    const { $schema, $defs, ...expected } = runtime.planSchema({ include: served });
    assert.equal($schema, 'https://json-schema.org/draft/2020-12/schema');
    for (const name of PLAN_TOOLS) {
      const tool = tools.find((listed) => listed.name === name);
      assert.deepEqual((tool?.inputSchema.properties as Json).plan, expected, name);
      assert.deepEqual(tool?.inputSchema.$defs, $defs, name);
      assert.deepEqual(tool?.inputSchema.required, ['plan']);
    }
    const submit = tools.find((listed) => listed.name === SUBMIT_PLAN_TOOL);
    assert.deepEqual(Object.keys(submit?.inputSchema.properties ?? {}), [
      'plan',
      'idempotencyKey',
      'approval',
    ]);
    // A write capability among them: submitting is not read-only.
    assert.deepEqual(submit?.annotations, { readOnlyHint: false, destructiveHint: false });
    assert.deepEqual(tools.find((listed) => listed.name === PREVIEW_PLAN_TOOL)?.annotations, {
      readOnlyHint: true,
    });
  });

  it('previews as the caller: each decision, nothing run, nothing recorded', async () => {
    const before = (await runtime.listJobs()).length;
    const result = await call(PREVIEW_PLAN_TOOL, { plan });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.structuredContent, {
      steps: [
        { id: 'who', capability: lookup, outcome: 'allow' },
        { id: 'mail', capability: send, outcome: 'unknown', waitsFor: ['who'] },
      ],
    });
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), {
      steps: (result.structuredContent as Json).steps,
    });
    assert.equal((await runtime.listJobs()).length, before);
  });

  it('submits as the caller and answers { jobId, status }; the job stops for approval at the write', async () => {
    const result = await call(SUBMIT_PLAN_TOOL, { plan });
    assert.equal(result.isError, undefined, JSON.stringify(result.content));
    const { jobId, status } = result.structuredContent as { jobId: string; status: string };
    assert.equal(status, 'queued');
    const job = await runtime.waitForJob(jobId, { timeoutMs: 10_000 });
    assert.equal(job?.status, 'awaiting_approval');
    assert.equal(job?.caller?.id, 'ada');
    assert.equal(job?.goal, 'Mail ada');
    // The job tool follows it, as the same caller.
    const followed = await call('warrant_job_status', { jobId });
    assert.equal((followed.structuredContent as Json).status, 'awaiting_approval');
  });

  it('answers an idempotency key again with the first job, replayed', async () => {
    const first = await call(SUBMIT_PLAN_TOOL, { plan, idempotencyKey: 'mail-ada-1' });
    const again = await call(SUBMIT_PLAN_TOOL, { plan, idempotencyKey: 'mail-ada-1' });
    const { jobId } = first.structuredContent as { jobId: string };
    assert.equal((again.structuredContent as Json).jobId, jobId);
    assert.equal((again.structuredContent as Json).replayed, true);
    const other = { ...plan, goal: 'Another plan' };
    const conflict = await call(SUBMIT_PLAN_TOOL, { plan: other, idempotencyKey: 'mail-ada-1' });
    assert.equal(conflict.isError, true);
    assert.equal((conflict.structuredContent as Json).code, 'IDEMPOTENCY_CONFLICT');
  });

  it('answers a refused plan as a tool error with every issue, its path and hint; nothing is recorded', async () => {
    const before = (await runtime.listJobs()).length;
    const bad = {
      version: '2.0',
      step: [{ id: 'who', capability: lookup }],
    };
    for (const name of PLAN_TOOLS) {
      const result = await call(name, { plan: bad });
      assert.equal(result.isError, true);
      assert.deepEqual(result.structuredContent, {
        error:
          'Execution plan failed validation: plan: steps must be an array, got undefined; did you mean "steps" instead of "step"?',
        code: 'PLAN_ADMISSION_REJECTED',
        issues: [
          {
            code: 'INVALID_PLAN',
            message:
              'plan: steps must be an array, got undefined; did you mean "steps" instead of "step"?',
            path: '/steps',
            field: 'steps',
            hint: 'did you mean "steps" instead of "step"?',
          },
        ],
      });
    }
    // A capability the adapter does not serve is not in its schema, but admission decides.
    const unserved = await call(PREVIEW_PLAN_TOOL, {
      plan: { version: '2.0', steps: [{ id: 'h', capability: hidden }] },
    });
    assert.equal(unserved.isError, undefined);
    assert.equal((await runtime.listJobs()).length, before);
  });

  it('refuses other approvals and bad keys, as tool errors', async () => {
    for (const [args, message] of [
      [{ plan, approval: 'all' }, /approval must be 'steps' or 'plan' when present/],
      [{ plan, idempotencyKey: '' }, /idempotencyKey must be a string of 1 to 200 characters/],
      [{ plan, idempotencyKey: 7 }, /idempotencyKey must be a string/],
    ] as const) {
      const result = await call(SUBMIT_PLAN_TOOL, args);
      assert.equal(result.isError, true);
      assert.match((result.content[0] as { text: string }).text, message);
    }
    const steps = await call(SUBMIT_PLAN_TOOL, { plan, approval: 'steps' });
    assert.equal(steps.isError, undefined);
    assert.deepEqual(readPlanToolArgs(SUBMIT_PLAN_TOOL, 'plan'), {
      problem: 'Invalid arguments: expected an object with plan',
    });
  });

  it("approval 'plan': one plan request, awaiting { kind: 'plan', planDigest }; a preview deny is PLAN_DENIED", async () => {
    const result = await call(SUBMIT_PLAN_TOOL, { plan, approval: 'plan' });
    assert.equal(result.isError, undefined);
    const content = result.structuredContent as {
      jobId: string;
      status: string;
      awaiting: { kind: string; planDigest: string };
    };
    assert.equal(content.status, 'awaiting_approval');
    const [request] = await runtime.listApprovals({ jobId: content.jobId });
    assert.equal(request?.kind, 'plan');
    assert.deepEqual(content.awaiting, {
      kind: 'plan',
      planDigest: request?.kind === 'plan' ? request.planDigest : undefined,
    });
    const denying = new OperatorRuntime({
      approvals: { approver: { canApprove: () => true } },
      authorizer: {
        authorize: ({ capability }) =>
          capability.risk === 'write'
            ? { decision: 'deny', reason: 'no mail today' }
            : { decision: 'allow' },
      },
    });
    closing.push(() => denying.close());
    const client = await connect(
      new McpAdapter(denying, { include: served, planTools: true, caller: { id: 'ada' } }),
    );
    const denied = (await client.callTool({
      name: SUBMIT_PLAN_TOOL,
      arguments: {
        plan: { version: '1.0', steps: [{ id: 'mail', capability: send, input: { to: 'x' } }] },
        approval: 'plan',
      },
    })) as CallToolResult;
    const refused = denied.structuredContent as Json;
    assert.equal(refused.status, 'failed');
    assert.equal(refused.code, 'PLAN_DENIED');
    assert.match(String(refused.error), /^PLAN_DENIED: step "mail" .* is denied: no mail today$/);
    // Without the approvals option: a tool error saying so.
    const plain = new OperatorRuntime();
    closing.push(() => plain.close());
    const without = await connect(
      new McpAdapter(plain, { include: served, planTools: true, caller: { id: 'ada' } }),
    );
    const noApprovals = (await without.callTool({
      name: SUBMIT_PLAN_TOOL,
      arguments: { plan: { version: '1.0', steps: [plan.steps[0]] }, approval: 'plan' },
    })) as CallToolResult;
    assert.equal(noApprovals.isError, true);
    assert.equal((noApprovals.structuredContent as Json).code, 'EXECUTE_OPTIONS_INVALID');
  });

  it('submits without a caller when there is none, as capability tools do', async () => {
    caller = undefined;
    try {
      const result = await call(SUBMIT_PLAN_TOOL, { plan: { ...plan, steps: [plan.steps[0]] } });
      const { jobId } = result.structuredContent as { jobId: string };
      const job = await runtime.waitForJob(jobId, { timeoutMs: 10_000 });
      assert.equal(job?.status, 'completed');
      assert.equal(job?.caller, undefined);
    } finally {
      caller = { id: 'ada', tenant: 't1' };
    }
  });

  it('with waitMs, answers the job once it stops: awaiting approval, with the step and digest', async () => {
    const waiting = await connect(
      new McpAdapter(runtime, {
        include: served,
        planTools: true,
        waitMs: 10_000,
        resolveCaller: () => ({ id: 'bob' }),
      }),
    );
    const result = (await waiting.callTool({
      name: SUBMIT_PLAN_TOOL,
      arguments: { plan },
    })) as CallToolResult;
    const content = result.structuredContent as {
      jobId: string;
      status: string;
      awaiting: { kind: string; stepId: string; inputDigest: string };
    };
    assert.equal(content.status, 'awaiting_approval');
    assert.equal(content.awaiting.kind, 'step');
    assert.equal(content.awaiting.stepId, 'mail');
    const [request] = stepRequests(await runtime.listApprovals({ jobId: content.jobId }));
    assert.equal(content.awaiting.inputDigest, request?.inputDigest);
  });

  it('is off by default, refuses a non-boolean planTools, and a capability named like a plan tool', () => {
    assert.throws(() => new McpAdapter(runtime, { planTools: 'yes' as never }), {
      code: 'MCP_ADAPTER_OPTIONS_INVALID',
      message: /options.planTools must be a boolean, got "yes"/,
    });
    const named = {
      include: ({ name }: CapabilityDescriptor) => name === lookup,
      toolName: () => SUBMIT_PLAN_TOOL,
    };
    assert.throws(() => new McpAdapter(runtime, { ...named, planTools: true }), {
      code: 'MCP_TOOL_NAME_COLLISION',
      message: /would be the MCP tool "warrant_submit_plan", which planTools serves/,
    });
    assert.doesNotThrow(() => new McpAdapter(runtime, named));
  });

  it('lists no plan tool without planTools', async () => {
    const plain = await connect(new McpAdapter(runtime, { include: served }));
    const { tools } = await plain.listTools();
    assert.equal(tools.filter((tool) => PLAN_TOOLS.includes(tool.name)).length, 0);
    const called = (await plain
      .callTool({
        name: PREVIEW_PLAN_TOOL,
        arguments: { plan },
      })
      .catch((error: Error) => error)) as Error;
    assert.match(called.message, /Tool warrant_preview_plan not found/);
  });
});
