// warrant_job_status through a real MCP client (@modelcontextprotocol/client) over the SDK's
// in-memory transport pair, and the read rule and answers of src/mcp/job-status.ts.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { McpAdapter, OperatorRuntime, type ExecutionCaller, type Job } from '../../src/index.js';
import {
  JOB_STATUS_TOOL,
  jobStatusContent,
  pendingContent,
  readJobStatusArgs,
} from '../../src/mcp/job-status.js';
import { register } from '../support/runtime-fixtures.js';

const closing: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closing) await close();
});

async function connect(adapter: McpAdapter): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await adapter.connect(serverTransport);
  const client = new Client({ name: 'warrant-test-client', version: '1.0.0' });
  await client.connect(clientTransport);
  closing.push(async () => {
    await client.close();
    await adapter.close();
  });
  return client;
}

function textOf(result: CallToolResult): string {
  const [block] = result.content;
  assert.equal(block?.type, 'text');
  return (block as { text: string }).text;
}

const toolOf = (capability: string) => capability.replaceAll('.', '_');

describe('warrant_job_status (jobTools)', () => {
  const runtime = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
  closing.push(() => runtime.close());
  const [read, write] = register(
    runtime,
    { execute: ({ input }) => ({ echoed: input }) },
    { risk: 'write', execute: () => ({ written: true }) },
  ) as [string, string];
  let caller: ExecutionCaller | undefined = { id: 'ada', tenant: 't1' };
  const adapter = new McpAdapter(runtime, { jobTools: true, resolveCaller: () => caller });
  const ready = connect(adapter);
  const status = async (args: Record<string, unknown>) =>
    (await (await ready).callTool({ name: JOB_STATUS_TOOL, arguments: args })) as CallToolResult;

  it('is listed only with jobTools, read-only, with jobId required', async () => {
    const client = await ready;
    const { tools } = await client.listTools();
    const listed = tools.find((tool) => tool.name === JOB_STATUS_TOOL);
    assert.deepEqual(listed?.annotations, { readOnlyHint: true });
    assert.deepEqual(listed?.inputSchema.required, ['jobId']);
    const plain = await connect(new McpAdapter(runtime));
    const plainTools = (await plain.listTools()).tools;
    assert.equal(
      plainTools.some((tool) => tool.name === JOB_STATUS_TOOL),
      false,
    );
    await assert.rejects(plain.callTool({ name: JOB_STATUS_TOOL, arguments: { jobId: 'x' } }), {
      message: /Tool warrant_job_status not found/,
    });
  });

  it('answers the submitter the status, step statuses and result of a completed job', async () => {
    caller = { id: 'ada', tenant: 't1' };
    const client = await ready;
    await client.callTool({ name: toolOf(read), arguments: { n: 1 } });
    const job = (await runtime.listJobs({ capability: read }))[0] as Job;
    const result = await status({ jobId: job.id });
    assert.equal(result.isError, undefined);
    const expected = {
      jobId: job.id,
      status: 'completed',
      steps: [{ id: 'call', capability: read, status: 'completed' }],
      result: { echoed: { n: 1 } },
    };
    assert.deepEqual(result.structuredContent, expected);
    assert.deepEqual(JSON.parse(textOf(result)), expected);
  });

  it('follows a call that stopped for approval to its result once decided', async () => {
    caller = { id: 'ada', tenant: 't1' };
    const client = await ready;
    const asked = (await client.callTool({
      name: toolOf(write),
      arguments: {},
    })) as CallToolResult;
    const { jobId, stepId, inputDigest } = asked.structuredContent as Record<
      'jobId' | 'stepId' | 'inputDigest',
      string
    >;
    const before = await status({ jobId, waitMs: 0 });
    assert.deepEqual(before.structuredContent, {
      jobId,
      status: 'awaiting_approval',
      steps: [{ id: 'call', capability: write, status: 'awaiting_approval' }],
    });
    await runtime.decideApproval({
      jobId: jobId,
      stepId: stepId,
      inputDigest: inputDigest,
      // Approvals never cross tenants (docs/api.md, "Reading and tenants").
      approver: { id: 'lead', tenant: 't1' },
      decision: 'approve',
    });
    assert.equal((await runtime.waitForJob(jobId, { timeoutMs: 5000 }))?.status, 'completed');
    const after = await status({ jobId });
    assert.deepEqual(after.structuredContent, {
      jobId,
      status: 'completed',
      steps: [{ id: 'call', capability: write, status: 'completed' }],
      result: { written: true },
    });
  });

  it('with waitMs, waits while the job awaits approval; the call that stopped says how to go on', async () => {
    caller = { id: 'ada', tenant: 't1' };
    const client = await ready;
    const asked = (await client.callTool({ name: toolOf(write), arguments: {} })) as CallToolResult;
    const { jobId, stepId, inputDigest } = asked.structuredContent as Record<
      'jobId' | 'stepId' | 'inputDigest',
      string
    >;
    assert.equal(
      textOf(asked),
      `Awaiting approval: job ${jobId}, step call. Nothing ran yet: an approver decides it (warrant approvals approve ${jobId} call --digest ${inputDigest}, POST /api/jobs/${jobId}/steps/call/approval, or the console). Then call warrant_job_status with {"jobId":"${jobId}","waitMs":30000} for its result.`,
    );
    // The wait starts before the decision and ends with the job's outcome, not at once.
    const waited = status({ jobId, waitMs: 20_000 });
    await runtime.decideApproval({
      jobId,
      stepId,
      inputDigest,
      approver: { id: 'lead', tenant: 't1' },
      decision: 'approve',
    });
    assert.deepEqual((await waited).structuredContent, {
      jobId,
      status: 'completed',
      steps: [{ id: 'call', capability: write, status: 'completed' }],
      result: { written: true },
    });
  });

  it('waits up to waitMs for a job to leave executing', async () => {
    caller = { id: 'ada', tenant: 't1' };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const [slow] = register(runtime, { execute: async () => (await gate, 'late') }) as [string];
    const { jobId } = await runtime.submitPlan(
      { version: '1.0', goal: 'slow', steps: [{ id: 's', capability: slow, input: {} }] },
      { caller },
    );
    const now = await status({ jobId });
    assert.notEqual((now.structuredContent as { status: string }).status, 'completed');
    const waiting = status({ jobId, waitMs: 10_000 });
    setTimeout(release, 50);
    const done = await waiting;
    assert.deepEqual(done.structuredContent, {
      jobId,
      status: 'completed',
      steps: [{ id: 's', capability: slow, status: 'completed' }],
      result: 'late',
    });
  });

  it('answers one "not found" for an unknown job and for a job the caller may not read', async () => {
    caller = { id: 'ada', tenant: 't1' };
    const client = await ready;
    await client.callTool({ name: toolOf(read), arguments: { n: 2 } });
    const job = (await runtime.listJobs({ capability: read }))[0] as Job;
    const unknown = await status({ jobId: 'no-such-job' });
    assert.equal(unknown.isError, true);
    assert.equal(textOf(unknown), 'Job "no-such-job" not found');
    for (const other of [
      { id: 'bob', tenant: 't1' },
      { id: 'ada', tenant: 't2' },
      { id: 'ada' },
      { id: 'auditor', tenant: 't2', scopes: ['warrant:audit'] },
      undefined,
    ]) {
      caller = other;
      // A long wait is never spent on a job the caller may not read.
      const hidden = await status({ jobId: job.id, waitMs: 30_000 });
      assert.equal(hidden.isError, true);
      assert.equal(textOf(hidden), `Job ${JSON.stringify(job.id)} not found`);
      assert.equal(hidden.structuredContent, undefined);
    }
    caller = { id: 'auditor', tenant: 't1', scopes: ['warrant:audit'] };
    const audited = await status({ jobId: job.id });
    assert.equal((audited.structuredContent as { status: string }).status, 'completed');
  });

  it('reads the job again as the caller after the wait', async () => {
    // A read policy that stops allowing while the caller waits: the answer is "not found".
    let allowed = true;
    let firstRead!: () => void;
    const read = new Promise<void>((resolve) => (firstRead = resolve));
    const watched = new OperatorRuntime({
      readPolicy: () => {
        firstRead();
        return allowed;
      },
    });
    closing.push(() => watched.close());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const [slow] = register(watched, { execute: async () => (await gate, 'late') }) as [string];
    const client = await connect(
      new McpAdapter(watched, {
        jobTools: true,
        resolveCaller: () => ({ id: 'auditor', tenant: 't1' }),
      }),
    );
    const { jobId } = await watched.submitPlan(
      { version: '1.0', goal: 'slow', steps: [{ id: 's', capability: slow, input: {} }] },
      { caller: { id: 'ada', tenant: 't1' } },
    );
    const waiting = client.callTool({
      name: JOB_STATUS_TOOL,
      arguments: { jobId, waitMs: 10_000 },
    }) as Promise<CallToolResult>;
    // Allowed at the first read; no longer by the time the job ends.
    await read;
    allowed = false;
    release();
    const answer = await waiting;
    assert.equal(answer.isError, true);
    assert.equal(textOf(answer), `Job ${JSON.stringify(jobId)} not found`);
  });

  it('refuses malformed arguments with a one-line error', async () => {
    for (const [args, message] of [
      [{}, /jobId must be a string of 1 to 200 characters/],
      [{ jobId: 7 }, /jobId must be a string/],
      [{ jobId: 'x'.repeat(201) }, /jobId must be a string/],
      [{ jobId: 'x', waitMs: 30_001 }, /waitMs must be an integer from 0 to 30000/],
      [{ jobId: 'x', waitMs: -1 }, /waitMs must be an integer/],
      [{ jobId: 'x', waitMs: '10' }, /waitMs must be an integer/],
    ] as const) {
      const result = await status(args);
      assert.equal(result.isError, true);
      assert.match(textOf(result), message);
    }
  });

  it('refuses jobTools next to a capability whose tool is warrant_job_status: MCP_TOOL_NAME_COLLISION', () => {
    const named = {
      include: ({ name }: { name: string }) => name === read,
      toolName: () => JOB_STATUS_TOOL,
    };
    assert.throws(() => new McpAdapter(runtime, { ...named, jobTools: true }), {
      code: 'MCP_TOOL_NAME_COLLISION',
      message: /which jobTools serves/,
    });
    // Without jobTools the name is free.
    assert.doesNotThrow(() => new McpAdapter(runtime, named));
  });
});

describe('pendingContent(job) and jobStatusContent(answer)', () => {
  it('names the step awaiting approval and its digest; a queued job has neither', () => {
    const awaiting = {
      id: 'j1',
      status: 'awaiting_approval',
      steps: [
        { id: 'a', status: 'completed' },
        { id: 'b', status: 'awaiting_approval', decision: { inputDigest: 'sha256:x' } },
      ],
    } as unknown as Job;
    assert.deepEqual(pendingContent(awaiting), {
      jobId: 'j1',
      stepId: 'b',
      status: 'awaiting_approval',
      inputDigest: 'sha256:x',
    });
    const queued = { id: 'j2', status: 'queued', steps: [] } as unknown as Job;
    assert.deepEqual(pendingContent(queued), { jobId: 'j2', status: 'queued' });
  });

  it('answers a failed job with its error and step errors, and no result', () => {
    assert.deepEqual(
      jobStatusContent({
        id: 'j',
        status: 'failed',
        error: 'boom',
        steps: [
          { id: 's', capability: 'c', status: 'failed', error: 'boom', input: { secret: 1 } },
        ],
      }),
      {
        jobId: 'j',
        status: 'failed',
        steps: [{ id: 's', capability: 'c', status: 'failed', error: 'boom' }],
        error: 'boom',
      },
    );
    assert.deepEqual(readJobStatusArgs(null), {
      problem: 'Invalid arguments: expected an object with jobId',
    });
  });
});
