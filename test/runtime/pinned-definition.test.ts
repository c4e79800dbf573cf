// Pinned tools in the runtime (docs/api.md, "Pinned tools"): a step of an outbound MCP tool runs
// under the definition its server lists, which the decision, `capability.started`, the
// authorizer's context and Cedar bind; the record proves it (verifyJob, evidence bundles), and an
// approved step runs only under the definition its approval was requested under. Against a real
// downstream MCP server over stdio (test/mcp/fixtures/downstream-server.mjs) and a real SQLite file.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import type Sqlite from 'better-sqlite3';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import {
  OperatorRuntime,
  cedarAuthorizer,
  cedarSchema,
  validateCedarPolicies,
  verifyEvidence,
  type EvidenceBundle,
  type Job,
  type JobVerification,
} from '../../src/index.js';
import { capabilityInventory } from '../../src/capabilities/inventory.js';
import { closeMcpConnections, createMcpCapability } from '../../src/mcp/outbound.js';
import { pinnedDefinition } from '../../src/runtime/pinned-definition.js';
import { register, uniqueName } from '../support/runtime-fixtures.js';

const SERVER = resolve(import.meta.dirname, '../mcp/fixtures/downstream-server.mjs');

after(closeMcpConnections);

/** A fresh downstream server (one process per connection), and the tools it was called with. */
function downstream() {
  const calls = join(mkdtempSync(join(tmpdir(), 'warrant-pins-')), 'calls.log');
  return {
    server: { command: process.execPath, args: [SERVER, '--calls', calls] },
    called: () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []),
  };
}

/** Registers the tool `tool` of `server` as a capability of its own module; returns its name. */
function useTool(
  runtime: OperatorRuntime,
  server: { command: string; args: string[] },
  tool: string,
  risk: 'read' | 'write' = 'read',
): string {
  const capability = createMcpCapability({ name: uniqueName('mcp'), risk, server, tool });
  runtime.use({
    manifest: { name: uniqueName('pins'), version: '1.0.0', capabilities: [capability.name] },
    capabilities: [capability],
  });
  return capability.name;
}

const oneStep = (capability: string, input: unknown) => ({
  version: '1.0' as const,
  steps: [{ id: 'call', capability, input }],
});

const runtimes: OperatorRuntime[] = [];
after(() => Promise.all(runtimes.map((runtime) => runtime.close())));

function sqliteRuntime(options: ConstructorParameters<typeof OperatorRuntime>[0] = {}) {
  const file = join(mkdtempSync(join(tmpdir(), 'warrant-pins-')), 'jobs.db');
  const runtime = new OperatorRuntime({ ...options, store: `sqlite:${file}` });
  runtimes.push(runtime);
  return { runtime, file };
}

/** Runs `edit` on the SQLite file, its own connection. */
function editDatabase(file: string, edit: (db: Sqlite.Database) => void): void {
  const db = new Database(file);
  try {
    edit(db);
  } finally {
    db.close();
  }
}

function broken(verification: JobVerification | undefined) {
  assert.ok(verification !== undefined && !verification.ok, 'reported broken');
  return verification as Extract<JobVerification, { ok: false }>;
}

describe('the definition digest in the record', () => {
  it('is in the decision and in capability.started; verifyJob reports it edited in the decision or in the event', async () => {
    const target = downstream();
    const { runtime, file } = sqliteRuntime();
    const echo = useTool(runtime, target.server, 'echo');
    const job = await runtime.executePlan(oneStep(echo, { text: 'recorded' }));
    assert.equal(job.status, 'completed', job.error);
    const digest = job.steps[0]?.decision?.definitionDigest;
    assert.match(digest ?? '', /^sha256:[0-9a-f]{64}$/);
    const stored = (await runtime.getJob(job.id)) as Job;
    assert.equal(stored.steps[0]?.decision?.definitionDigest, digest);
    const started = stored.events.findIndex((event) => event.type === 'capability.started');
    assert.equal(stored.events[started]?.data?.definitionDigest, digest);
    assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });

    const other = `sha256:${'1'.repeat(64)}`;
    editDatabase(file, (db) => {
      const row = db
        .prepare(
          'SELECT decision FROM job_steps WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?)',
        )
        .get(job.id) as { decision: string };
      // The column holds the step's decision (and input as authorized) as the record has them.
      const column = JSON.parse(row.decision) as { decision: Record<string, unknown> };
      column.decision.definitionDigest = other;
      db.prepare(
        'UPDATE job_steps SET decision = ? WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?)',
      ).run(JSON.stringify(column), job.id);
    });
    assert.equal((await runtime.getJob(job.id))?.steps[0]?.decision?.definitionDigest, other);
    const inDecision = broken(await runtime.verifyJob(job.id));
    assert.equal(inDecision.reason, 'the decision of step call does not match its events');
    assert.equal(inDecision.eventIndex, started);

    // The event says the other digest too: the record agrees with it, the chain does not.
    editDatabase(file, (db) => {
      db.prepare(
        `UPDATE job_events SET event = replace(event, ?, ?) WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?) AND position = ?`,
      ).run(digest, other, job.id, started);
    });
    const inEvent = broken(await runtime.verifyJob(job.id));
    assert.equal(inEvent.eventIndex, started);
    assert.match(inEvent.reason, /^event \d+ \(capability\.started\) does not match its hash/);
  });

  it('is covered by an evidence bundle: a bundle with another digest does not verify', async () => {
    const target = downstream();
    const { runtime } = sqliteRuntime();
    const echo = useTool(runtime, target.server, 'echo');
    const job = await runtime.executePlan(oneStep(echo, { text: 'exported' }));
    const bundle = (await runtime.exportJob(job.id)) as EvidenceBundle;
    assert.equal(verifyEvidence(bundle).ok, true);
    const forged = JSON.parse(JSON.stringify(bundle)) as {
      job: { steps: { decision: { definitionDigest: string } }[] };
    };
    (forged.job.steps[0] as { decision: { definitionDigest: string } }).decision.definitionDigest =
      `sha256:${'2'.repeat(64)}`;
    const verification = verifyEvidence(forged as unknown as EvidenceBundle);
    assert.equal(verification.ok, false);
    assert.ok(
      verification.problems.some((problem) => problem.part === 'job'),
      JSON.stringify(verification.problems),
    );
  });
});

describe('Cedar and the definition digest', () => {
  it('gives Cedar context.definitionDigest, declared in the schema for outbound MCP tools only', async () => {
    const target = downstream();
    const probe = new OperatorRuntime({ store: 'memory' });
    runtimes.push(probe);
    const echo = useTool(probe, target.server, 'echo');
    const digest = (await probe.executePlan(oneStep(echo, { text: 'probe' }))).steps[0]?.decision
      ?.definitionDigest as string;

    const [plain] = register(probe, { execute: ({ input }) => input }) as [string];
    const schema = cedarSchema();
    const action = schema.slice(schema.indexOf(`action "${echo}"`));
    assert.match(action.slice(0, action.indexOf('};')), /"definitionDigest": String/);
    const plainAction = schema.slice(schema.indexOf(`action "${plain}"`));
    assert.doesNotMatch(plainAction.slice(0, plainAction.indexOf('};')), /definitionDigest/);
    const policy = (pinned: string) =>
      `permit(principal, action == Warrant::Action::"${echo}", resource) when { context.definitionDigest == "${pinned}" };`;
    // Strict validation: written without `has`, since every request of the tool carries it.
    assert.deepEqual(validateCedarPolicies(policy(digest)), []);

    const allowed = new OperatorRuntime({
      store: 'memory',
      authorizer: cedarAuthorizer({ policies: policy(digest) }),
    });
    const denied = new OperatorRuntime({
      store: 'memory',
      authorizer: cedarAuthorizer({ policies: policy(`sha256:${'3'.repeat(64)}`) }),
    });
    runtimes.push(allowed, denied);
    const ran = await allowed.executePlan(oneStep(echo, { text: 'as pinned' }));
    assert.equal(ran.status, 'completed', ran.error);
    const refused = await denied.executePlan(oneStep(echo, { text: 'another definition' }));
    assert.equal(refused.status, 'failed');
    assert.equal(refused.steps[0]?.decision?.outcome, 'deny');
    assert.equal(refused.steps[0]?.decision?.definitionDigest, digest);
    assert.deepEqual(
      target.called().filter((tool) => tool === 'echo'),
      ['echo', 'echo'],
    );
  });
});

describe('pinnedDefinition(capability, requested)', () => {
  it('answers undefined, with no promise, for a capability that is not an outbound tool', () => {
    const runtime = new OperatorRuntime({ store: 'memory' });
    runtimes.push(runtime);
    const [plain] = register(runtime, { execute: ({ input }) => input }) as [string];
    const registered = capabilityInventory().get(plain);
    assert.ok(registered);
    assert.equal(pinnedDefinition(registered, undefined), undefined);
  });

  it('refuses an approved step whose tool is defined otherwise than when approval was requested', async () => {
    const target = downstream();
    const runtime = new OperatorRuntime({ store: 'memory' });
    runtimes.push(runtime);
    const echo = useTool(runtime, target.server, 'echo');
    const registered = capabilityInventory().get(echo);
    assert.ok(registered);
    const pinned = await pinnedDefinition(registered, undefined);
    assert.ok(pinned !== undefined && 'digest' in pinned);
    assert.deepEqual(await pinnedDefinition(registered, pinned.digest), pinned);
    const requested = `sha256:${'4'.repeat(64)}`;
    assert.deepEqual(await pinnedDefinition(registered, requested), {
      error: `TOOL_DEFINITION_CHANGED: the tool's definition changed since approval was requested (${requested}, now ${pinned.digest})`,
    });
    assert.deepEqual(target.called(), []);
  });

  it('records the digest with an approval request, and runs the granted step under it', async () => {
    const target = downstream();
    const { runtime } = sqliteRuntime({ approvals: { approver: { canApprove: () => true } } });
    const echo = useTool(runtime, target.server, 'echo', 'write');
    const waiting = await runtime.executePlan(oneStep(echo, { text: 'approve me' }), {
      caller: { id: 'alice' },
    });
    assert.equal(waiting.status, 'awaiting_approval');
    const digest = waiting.steps[0]?.decision?.definitionDigest;
    assert.match(digest ?? '', /^sha256:[0-9a-f]{64}$/);
    const requested = waiting.events.find((event) => event.type === 'approval.requested');
    assert.equal(requested?.data?.definitionDigest, digest);
    assert.deepEqual(await runtime.verifyJob(waiting.id), {
      ok: true,
      events: waiting.events.length,
    });
    const done = await runtime.decideApproval({
      jobId: waiting.id,
      stepId: 'call',
      inputDigest: waiting.steps[0]?.decision?.inputDigest as string,
      approver: { id: 'bob' },
      decision: 'approve',
    });
    assert.equal(done.status, 'completed', done.error);
    assert.equal(done.steps[0]?.decision?.definitionDigest, digest);
    assert.deepEqual(target.called(), ['echo']);
    assert.deepEqual(await runtime.verifyJob(done.id), { ok: true, events: done.events.length });
  });
});
