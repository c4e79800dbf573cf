// What a model-like MCP client does with Warrant's plan tools (issue 48), shared by the
// stdio test (`warrant mcp --plan-tools`) and the Streamable HTTP test (`warrant serve`'s /mcp):
// list the tools, write a three-step plan with result references against the published plan
// schema, preview it, submit it, follow it with warrant_job_status to completion, and get the
// issues (code, path, hint) of a malformed plan as a tool result, never a protocol error. The
// capabilities are those of test/mcp/fixtures/plan-capabilities.mjs.
import assert from 'node:assert/strict';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';

type Json = Record<string, unknown>;

/** The plan tools as listed, and the plan version their schema asks for. */
export async function listPlanTools(
  client: Client,
): Promise<{ names: string[]; submitSchema: Json; version: string }> {
  const { tools } = await client.listTools();
  const submit = tools.find((tool) => tool.name === 'warrant_submit_plan');
  assert.ok(submit !== undefined, 'warrant_submit_plan is listed');
  const plan = (submit.inputSchema.properties as Json).plan as Json;
  const version = ((plan.properties as Json).version as Json).const as string;
  return { names: tools.map((tool) => tool.name), submitSchema: submit.inputSchema, version };
}

export function threeStepPlan(version: string): Json {
  return {
    version,
    goal: 'Summarize the notes on planning',
    steps: [
      { id: 'find', capability: 'notes.find', input: { topic: 'planning' } },
      { id: 'read', capability: 'notes.read', input: { id: { $ref: 'steps.find.result.id' } } },
      {
        id: 'sum',
        capability: 'notes.summarize',
        input: { text: { $ref: 'steps.read.result.text' }, words: 2 },
      },
    ],
  };
}

/** Asserts the whole flow; resolves with the completed job's structured status. */
export async function runPlanToolFlow(client: Client): Promise<Json> {
  const { names, submitSchema, version } = await listPlanTools(client);
  assert.ok(names.includes('warrant_preview_plan') && names.includes('warrant_job_status'));
  const plan = threeStepPlan(version);
  // The plan a model writes against the published schema is valid against it.
  const valid = new AjvJsonSchemaValidator().getValidator(submitSchema as never)({ plan });
  assert.equal(valid.valid, true, valid.errorMessage);

  const preview = await client.callTool({ name: 'warrant_preview_plan', arguments: { plan } });
  assert.equal(preview.isError, undefined, JSON.stringify(preview.content));
  assert.deepEqual(preview.structuredContent, {
    steps: [
      { id: 'find', capability: 'notes.find', outcome: 'allow' },
      { id: 'read', capability: 'notes.read', outcome: 'unknown', waitsFor: ['find'] },
      { id: 'sum', capability: 'notes.summarize', outcome: 'unknown', waitsFor: ['read'] },
    ],
  });

  const submitted = await client.callTool({ name: 'warrant_submit_plan', arguments: { plan } });
  assert.equal(submitted.isError, undefined, JSON.stringify(submitted.content));
  const { jobId, status } = submitted.structuredContent as { jobId: string; status: string };
  assert.match(jobId, /^[0-9a-f-]{36}$/);
  assert.ok(['queued', 'executing', 'completed'].includes(status), status);

  // Follow it to completion: each call waits (bounded) while the job is queued or executing.
  let job: Json = {};
  for (let turn = 0; turn < 20; turn++) {
    const result = await client.callTool({
      name: 'warrant_job_status',
      arguments: { jobId, waitMs: 5_000 },
    });
    assert.equal(result.isError, undefined, JSON.stringify(result.content));
    job = result.structuredContent as Json;
    if (job.status !== 'queued' && job.status !== 'executing') break;
  }
  assert.equal(job.status, 'completed');
  // A plan's result: each step's result, in order.
  assert.deepEqual(job.result, [
    { id: 'note-planning', title: 'Notes on planning' },
    { text: 'note-planning: plans are data, admission decides' },
    { summary: 'note-planning: plans' },
  ]);
  assert.deepEqual(
    (job.steps as Json[]).map((step) => step.status),
    ['completed', 'completed', 'completed'],
  );
  return job;
}

/** A malformed plan, through both tools: a tool result with isError and the issues. */
export async function assertMalformedPlanIssues(client: Client): Promise<void> {
  const { version } = await listPlanTools(client);
  const plan = {
    version,
    steps: [{ id: 'find', capability: 'notes.find', version: '1.0.0', input: { topik: 'x' } }],
  };
  for (const name of ['warrant_preview_plan', 'warrant_submit_plan']) {
    const result: CallToolResult = await client.callTool({ name, arguments: { plan } });
    assert.equal(result.isError, true, name);
    const content = result.structuredContent as { code: string; issues: Json[] };
    assert.equal(content.code, 'PLAN_ADMISSION_REJECTED');
    const issues = content.issues.map(({ code, path, hint }) => ({ code, path, hint }));
    const strict = version === '2.0';
    assert.deepEqual(issues, [
      ...(strict
        ? [
            {
              code: 'UNKNOWN_STEP_FIELD',
              path: '/steps/0/version',
              hint: 'did you mean "capabilityVersion"?',
            },
          ]
        : []),
      { code: 'REQUIRED_INPUT_MISSING', path: '/steps/0/input/topic', hint: undefined },
      ...(strict
        ? [
            {
              code: 'UNDECLARED_INPUT_FIELD',
              path: '/steps/0/input/topik',
              hint: 'did you mean "topic"?',
            },
          ]
        : []),
    ]);
    const [text] = result.content;
    assert.equal(text?.type, 'text');
    assert.deepEqual(JSON.parse((text as { text: string }).text), result.structuredContent);
  }
  // Not even an object: still the issues, never a protocol error.
  const none = await client.callTool({ name: 'warrant_submit_plan', arguments: {} });
  assert.equal(none.isError, true);
  assert.deepEqual((none.structuredContent as { issues: Json[] }).issues, [
    { code: 'INVALID_PLAN', message: 'plan must be an object', path: '' },
  ]);
}
