// Approvals, as a property (issue 18 "Tests"): over generated plans, approver policies and
// interleavings of decisions (approve, reject, a wrong digest, the submitter, two decisions at
// once, a restart of the runtime on the same SQLite file between decisions), a capability that needs approval runs only after exactly one granted approval for that
// exact job, step, version and input digest, by an approver the policy allows other than the
// submitter, and at most once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  OperatorRuntime,
  createCapability,
  type CapabilityRisk,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import { recordValue } from '../../src/jobs/recorded-value.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import { settings } from './support.js';
import { stepRequests } from '../support/step-requests.js';

interface Invocation {
  readonly jobId: string;
  readonly stepId: string;
  readonly risk: CapabilityRisk;
  readonly digest: string;
}
const invoked: Invocation[] = [];
const RISKS: readonly CapabilityRisk[] = ['read', 'write', 'destructive'];
const names = new Map<CapabilityRisk, string>(
  RISKS.map((risk) => [risk, uniqueName(`prop.${risk}`)]),
);
new OperatorRuntime().use({
  manifest: { name: uniqueName('prop-approvals'), version: '1', capabilities: [...names.values()] },
  capabilities: RISKS.map((risk) =>
    createCapability({
      name: names.get(risk) as string,
      version: '1',
      description: risk,
      risk,
      execute: ({ input, context }) => {
        invoked.push({
          jobId: context.jobId,
          stepId: context.stepId,
          risk,
          digest: recordValue(input, 'input').digest,
        });
        return { k: (input as { k?: number }).k ?? 0 };
      },
    }),
  ),
});

const PEOPLE = ['alice', 'bob', 'carol'] as const;
const stepArb = fc.record({
  risk: fc.constantFrom(...RISKS),
  k: fc.integer({ min: 0, max: 3 }),
  ref: fc.boolean(),
});
const actionArb = fc.record({
  pick: fc.nat(5),
  approver: fc.constantFrom(...PEOPLE),
  decision: fc.constantFrom('approve' as const, 'reject' as const),
  digestOk: fc.boolean(),
  pair: fc.boolean(),
  restart: fc.boolean(),
});

const directory = mkdtempSync(join(tmpdir(), 'warrant-approvals-property-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let runs = 0;
// Each run opens an SQLite file and may restart the runtime on it up to six times, so runs are
// WARRANT_PROPERTY_RUNS, at most MAX_RUNS (docs/decisions.md, "Test runs").
const MAX_RUNS = 1_000;
const numRuns = Math.min(settings.numRuns, MAX_RUNS);

describe('approvals property', () => {
  it(`runs a step that needs approval only after one granted approval for exactly it (seed ${settings.seed}, ${numRuns} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 4 }),
        fc.subarray([...PEOPLE]),
        fc.constantFrom(...PEOPLE),
        fc.array(actionArb, { maxLength: 6 }),
        async (steps, allowed, submitter, actions) => {
          invoked.length = 0;
          // Each run has its own SQLite file; a restart opens a new runtime on it, which must
          // list the pending requests and resume the job as if nothing had happened.
          const store = `sqlite:${join(directory, `run-${(runs += 1)}.db`)}`;
          const open = () =>
            new OperatorRuntime({
              store,
              approvals: {
                approver: { canApprove: (approver) => allowed.includes(approver.id as never) },
              },
            });
          let runtime = open();
          try {
            const plan: ExecutionPlan = {
              version: '1.0',
              steps: steps.map((step, index) => ({
                id: `s${index}`,
                capability: names.get(step.risk) as string,
                input:
                  step.ref && index > 0
                    ? { k: { $ref: `steps.s${index - 1}.result.k` } }
                    : { k: step.k },
              })),
            };
            const job = await runtime.executePlan(plan, { caller: { id: submitter } });
            let decided = 0;
            for (const action of actions) {
              if (action.restart) {
                const key = (r: { stepId: string; inputDigest: string }) =>
                  `${r.stepId} ${r.inputDigest}`;
                const before = stepRequests(await runtime.listApprovals()).map(key);
                await runtime.close();
                runtime = open();
                assert.deepEqual(stepRequests(await runtime.listApprovals()).map(key), before);
              }
              const pending = stepRequests(await runtime.listApprovals());
              const request = pending[action.pick % Math.max(1, pending.length)];
              if (request === undefined) break;
              const decide = (approver: string) =>
                runtime.decideApproval({
                  jobId: request.jobId,
                  stepId: request.stepId,
                  inputDigest: action.digestOk ? request.inputDigest : `sha256:${'0'.repeat(64)}`,
                  approver: { id: approver },
                  decision: action.decision,
                });
              const outcomes = await Promise.allSettled(
                action.pair
                  ? [decide(action.approver), decide('carol')]
                  : [decide(action.approver)],
              );
              for (const outcome of outcomes) {
                if (outcome.status === 'fulfilled') decided += 1;
                else
                  assert.match(
                    String((outcome.reason as { code?: string }).code),
                    /^APPROVAL_(NOT_PENDING|DIGEST_MISMATCH|SELF_APPROVAL|FORBIDDEN)$/,
                  );
              }
            }
            const record = (await runtime.getJob(job.id)) as Job;
            const decisions = record.events.filter(
              (event) => event.type === 'approval.granted' || event.type === 'approval.rejected',
            );
            assert.equal(decisions.length, decided);
            const seen = new Set<string>();
            for (const call of invoked) {
              assert.equal(seen.has(call.stepId), false, 'a step ran twice');
              seen.add(call.stepId);
              if (call.risk === 'read') continue;
              const granted = record.events.filter(
                (event) => event.type === 'approval.granted' && event.data?.stepId === call.stepId,
              );
              assert.equal(granted.length, 1);
              const approver = granted[0]?.data?.approver as string;
              assert.notEqual(approver, submitter);
              assert.ok(allowed.includes(approver as never));
              const requested = record.events.filter(
                (event) =>
                  event.type === 'approval.requested' && event.data?.stepId === call.stepId,
              );
              assert.equal(requested.length, 1);
              assert.equal(requested[0]?.data?.inputDigest, call.digest);
              assert.equal(requested[0]?.data?.capabilityVersion, '1');
              assert.ok(
                record.events.indexOf(granted[0] as never) >
                  record.events.indexOf(requested[0] as never),
              );
            }
            // Nothing that needs approval ran without a grant: every grant is on a step that then ran
            // (or failed closed), and no step needing approval ran without one.
            for (const step of record.steps) {
              if (step.status === 'awaiting_approval') assert.equal(seen.has(step.id), false);
            }
          } finally {
            await runtime.close();
          }
        },
      ),
      {
        seed: settings.seed,
        numRuns,
        ...(settings.path === undefined ? {} : { path: settings.path }),
        endOnFailure: false,
      },
    );
  });
});
