// examples/planner/ (issue 48): goal → plan through the AI SDK's generateObject with
// the plan schema → preview → submit → approval → result, with the AI SDK's mock language model
// (no network). The example imports only 'warrant' (the built package) and 'ai': run
// `npm run build` first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import type { StepApprovalRequest } from 'warrant';
import { createSupportRuntime, planAndRun } from '../../examples/planner/planner.js';
import { REMINDER_PLAN, scriptedModel } from '../../examples/planner/scripted-model.js';

// One runtime for the file: the capabilities are registered once per process.
const runtime = createSupportRuntime();
const people = {
  caller: { id: 'agent-for-ada' },
  approver: { id: 'ops-lead' },
  goal: 'Remind customer c-42 of their open invoice',
};

/** The reminder plan as a model might first write it: a misnamed key and an extra field. */
const FLAWED = {
  ...REMINDER_PLAN,
  steps: REMINDER_PLAN.steps.map((step) =>
    step.id === 'remind'
      ? { ...step, version: '1.0.0', input: { ...step.input, cc: 'boss@example.com' } }
      : step,
  ),
};

describe('examples/planner/', () => {
  it('plans with the schema, corrects a refused plan from its issues, and runs it after approval', async () => {
    const model = scriptedModel([FLAWED, REMINDER_PLAN]);
    const asked: StepApprovalRequest[] = [];
    const lines: string[] = [];
    const job = await planAndRun({
      runtime,
      model,
      ...people,
      approve: (request) => {
        asked.push(request);
        return true;
      },
      log: (line) => lines.push(line),
    });
    assert.equal(job.status, 'completed');
    assert.deepEqual(job.result, [
      { name: 'Ada Lovelace', email: 'c-42@example.com' },
      { invoice: 'INV-c-42', amountDue: 120 },
      { sent: true, to: 'c-42@example.com' },
    ]);
    // The model was given the plan schema, and told what to correct the second time.
    const [first, second] = model.doGenerateCalls;
    assert.equal(model.doGenerateCalls.length, 2);
    assert.deepEqual((first?.responseFormat as { schema?: unknown }).schema, runtime.planSchema());
    const told = JSON.stringify(second?.prompt);
    assert.match(told, /UNKNOWN_STEP_FIELD at \/steps\/2\/version/);
    assert.match(told, /did you mean \\"capabilityVersion\\"\?/);
    assert.match(told, /UNDECLARED_INPUT_FIELD at \/steps\/2\/input\/cc/);
    // Approval was asked once, for the write, with the reference resolved.
    assert.deepEqual(
      asked.map((request) => [request.capability, (request.input as { to: string }).to]),
      [['mail.send', 'c-42@example.com']],
    );
    assert.match(lines[0] ?? '', /^plan 1 refused:\n- UNKNOWN_STEP_FIELD at \/steps\/2\/version/);
    assert.match(lines.at(-1) ?? '', /^job completed: /);
    assert.deepEqual(lines.slice(1, -1), [
      'plan 2: customer=crm.customer, invoice=billing.invoice, remind=mail.send',
      'preview customer: allow',
      'preview invoice: allow',
      'preview remind: unknown',
      'approved remind: mail.send {"to":"c-42@example.com","subject":"Your open invoice","body":"A friendly reminder that your invoice is open."}',
    ]);
    const granted = job.events.find((event) => event.type === 'approval.granted');
    assert.deepEqual([granted?.data?.stepId, granted?.data?.approver], ['remind', 'ops-lead']);
  });

  it('stops at a rejected approval: the write never runs', async () => {
    const job = await planAndRun({
      runtime,
      model: scriptedModel([REMINDER_PLAN]),
      ...people,
      approve: () => false,
    });
    assert.equal(job.status, 'failed');
    assert.equal(job.steps.at(-1)?.status, 'failed');
    assert.match(job.error ?? '', /Approval rejected/);
  });

  it('runs offline as the README says: npx tsx examples/planner/main.ts', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'examples/planner/main.ts'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, PLANNER_MODEL: '' },
    });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /^job completed: \[/m);
  });
});
