// Plans from planners over HTTP (issue 48), against one `warrant serve` child with a
// token: the plan tools on /mcp through the official MCP client over Streamable HTTP (a
// model-like client previews a three-step plan with references, submits it, follows it with
// warrant_job_status to completion; a malformed plan answers its issues), and GET
// /api/plans/schema behind the same gate as every read route. Run `npm run build` first.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { assertMalformedPlanIssues, runPlanToolFlow } from '../support/plan-tool-flow.js';
import { call, mcpClient, serveChild } from '../support/serve-child.js';

const NOTES = resolve(import.meta.dirname, '../mcp/fixtures/plan-capabilities.mjs');
const TOKEN = 'plan-tools-token';

describe('warrant serve: plan tools on /mcp and GET /api/plans/schema', () => {
  const served = serveChild(['--module', NOTES, '--token', TOKEN, '--plan-versions', '1.0,2.0']);
  after(() => served.stop());

  it('serves the plan tools to an authenticated client: preview, submit, follow to completion', async () => {
    const client = await mcpClient(await served.listening, TOKEN);
    const job = await runPlanToolFlow(client);
    // The plan ran as the caller the token names.
    const answer = await call(await served.listening, 'GET', `/api/jobs/${String(job.jobId)}`, {
      token: TOKEN,
    });
    assert.equal(answer.status, 200);
    assert.equal((answer.json.caller as { id?: string } | undefined)?.id, 'token');
  });

  it('answers a malformed plan with its issues as a tool error', async () => {
    await assertMalformedPlanIssues(await mcpClient(await served.listening, TOKEN));
  });

  it('answers the plan schema of every registered capability, behind the gate', async () => {
    const address = await served.listening;
    const schema = await call(address, 'GET', '/api/plans/schema', { token: TOKEN });
    assert.equal(schema.status, 200);
    assert.equal(schema.json.$schema, 'https://json-schema.org/draft/2020-12/schema');
    const properties = schema.json.properties as Record<
      string,
      { const?: string; items?: unknown }
    >;
    assert.equal(properties.version?.const, '2.0');
    const branches = (
      properties.steps?.items as { oneOf: { properties: { capability: { const: string } } }[] }
    ).oneOf;
    assert.deepEqual(
      branches
        .map((branch) => branch.properties.capability.const)
        .filter((name) => name.startsWith('notes.')),
      ['notes.find', 'notes.read', 'notes.summarize'],
    );
    const again = await call(address, 'GET', '/api/plans/schema', { token: TOKEN });
    assert.deepEqual(again.json, schema.json);
    const v1 = await call(address, 'GET', '/api/plans/schema?version=1.0', { token: TOKEN });
    assert.equal((v1.json.properties as Record<string, { const?: string }>).version?.const, '1.0');
    const bad = await call(address, 'GET', '/api/plans/schema?version=3.0', { token: TOKEN });
    assert.equal(bad.status, 400);
    assert.match(
      String(bad.json.error),
      /options.version must be a plan version this runtime admits/,
    );
    const anonymous = await call(address, 'GET', '/api/plans/schema');
    assert.equal(anonymous.status, 401);
  });
});
