// Plan warrants, as a property (issue 49; docs/api.md, "Plan warrants"): over generated 2.0
// plans (literal inputs and result references), bounds, resolved values and authorizer answers
// (which may change between the preview and the run), with the plan approved and every step
// request then approved as it comes, a step runs only after a fresh decision at its turn that
// allowed it, or asked approval and was covered by the plan grant (the model below: a step
// without references, or every referenced field bounded and its value within), or asked
// approval and was approved on its own. A step denied at its turn never runs; a step previewed
// deny refuses the plan before anything runs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  OperatorRuntime,
  createCapability,
  type CapabilityAuthorizationContext,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';
import { settings } from './support.js';

type Answer = 'allow' | 'deny' | 'require_approval';
const ANSWERS: readonly Answer[] = ['allow', 'deny', 'require_approval'];

/** Every invocation, as `<jobId> <stepId>`; and each step's result value, by step id. */
const invoked: string[] = [];
let results = new Map<string, number>();
const capability = uniqueName('prop.plan');
new OperatorRuntime().use({
  manifest: { name: uniqueName('prop-plan-warrant'), version: '1', capabilities: [capability] },
  capabilities: [
    createCapability({
      name: capability,
      version: '1',
      description: 'returns a generated value',
      risk: 'write',
      execute: ({ context }) => {
        invoked.push(`${context.jobId} ${context.stepId}`);
        return { v: results.get(context.stepId) ?? 0 };
      },
    }),
  ],
});

const stepArb = fc.record({
  /** A literal v, or a reference to an earlier step's result (when there is one). */
  ref: fc.boolean(),
  literal: fc.integer({ min: -5, max: 5 }),
  refTo: fc.nat(8),
  /** Bounds on v: none, or [minimum, maximum]. */
  bounds: fc.option(fc.tuple(fc.integer({ min: -10, max: 10 }), fc.integer({ min: 0, max: 10 })), {
    nil: undefined,
  }),
  result: fc.integer({ min: -20, max: 20 }),
  preview: fc.constantFrom(...ANSWERS),
  run: fc.constantFrom(...ANSWERS),
});

const numRuns = Math.min(settings.numRuns, 300);

describe('plan warrants property', () => {
  it(`a step runs only after a fresh allow, a plan grant that covers it, or its own approval (seed ${settings.seed}, ${numRuns} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 5 }), async (generated) => {
        invoked.length = 0;
        results = new Map(generated.map((step, index) => [`s${index}`, step.result]));
        const byId = new Map(generated.map((step, index) => [`s${index}`, step]));
        /** Fresh decisions at run time (not previews), with their answers. */
        const fresh: { stepId: string; approved: boolean; answer: Answer }[] = [];
        const authorize = (context: CapabilityAuthorizationContext) => {
          const step = byId.get(context.stepId);
          const answer: Answer =
            context.preview === true
              ? (step?.preview ?? 'deny')
              : context.approval !== undefined && step?.run !== 'deny'
                ? 'allow'
                : (step?.run ?? 'deny');
          if (context.preview !== true)
            fresh.push({
              stepId: context.stepId,
              approved: context.approval !== undefined,
              answer,
            });
          return { decision: answer };
        };
        const runtime = new OperatorRuntime({
          authorizer: { authorize },
          planVersions: ['1.0', '2.0'],
          approvals: { approver: { canApprove: () => true } },
        });
        try {
          const refOf = (index: number) => {
            const step = generated[index] as (typeof generated)[number];
            return step.ref && index > 0 ? step.refTo % index : undefined;
          };
          const plan: ExecutionPlan = {
            version: '2.0',
            steps: generated.map((step, index) => {
              const target = refOf(index);
              return {
                id: `s${index}`,
                capability,
                input: {
                  v: target === undefined ? step.literal : { $ref: `steps.s${target}.result.v` },
                },
                ...(step.bounds !== undefined && {
                  bounds: {
                    v: {
                      type: 'integer',
                      minimum: step.bounds[0],
                      maximum: step.bounds[0] + step.bounds[1],
                    },
                  },
                }),
              };
            }),
          };
          let job = await runtime.executePlan(plan, { caller: { id: 'alice' }, approval: 'plan' });
          const previewedDeny = generated.some(
            (step, index) => refOf(index) === undefined && step.preview === 'deny',
          );
          if (previewedDeny) {
            assert.equal(job.status, 'failed');
            assert.match(job.error ?? '', /^PLAN_DENIED: /);
            assert.deepEqual(invoked, []);
            assert.deepEqual(fresh, [], 'no step was decided to run');
            return;
          }
          // Approve the plan (when it waits for one), then every step request as it comes.
          let granted = false;
          const stepApproved = new Set<string>();
          for (let round = 0; job.status === 'awaiting_approval' && round < 20; round++) {
            const [request] = await runtime.listApprovals({ jobId: job.id });
            assert.ok(request !== undefined);
            if (request.kind === 'plan') {
              granted = true;
              job = await runtime.decideApproval({
                kind: 'plan',
                jobId: job.id,
                planDigest: request.planDigest,
                approver: { id: 'bob' },
                decision: 'approve',
              });
            } else {
              stepApproved.add(request.stepId);
              job = await runtime.decideApproval({
                jobId: job.id,
                stepId: request.stepId,
                inputDigest: request.inputDigest,
                approver: { id: 'bob' },
                decision: 'approve',
              });
            }
          }
          const record = (await runtime.getJob(job.id)) as Job;
          const ran = new Set(invoked.map((line) => line.split(' ')[1] as string));
          for (const [index, step] of generated.entries()) {
            const id = `s${index}`;
            const target = refOf(index);
            // What the step's v resolved to (the literal, or the referenced step's result).
            const v = target === undefined ? step.literal : results.get(`s${target}`);
            const decisions = fresh.filter((call) => call.stepId === id);
            const recorded = record.steps[index];
            if (!ran.has(id)) {
              assert.equal(recorded?.decision?.approval, undefined);
              continue;
            }
            assert.equal(invoked.filter((line) => line.endsWith(` ${id}`)).length, 1, 'once');
            const last = decisions.at(-1);
            assert.ok(last !== undefined, `${id} ran without a fresh decision`);
            assert.notEqual(last.answer, 'deny', `${id} ran after a denial`);
            // The model of coverage: a grant, and no reference or a bounded value within.
            const bounded =
              step.bounds !== undefined &&
              v !== undefined &&
              v >= step.bounds[0] &&
              v <= step.bounds[0] + step.bounds[1];
            const covered = granted && (target === undefined || bounded);
            if (last.answer === 'require_approval') {
              // Ran under the plan grant: the model says it covers the step.
              assert.ok(covered, `${id} ran under a grant that does not cover it`);
              assert.equal(recorded?.decision?.approval?.kind, 'plan');
              assert.equal(stepApproved.has(id), false);
            } else if (last.approved) {
              // Approved on its own: it asked first, outside any grant that covers it.
              assert.ok(stepApproved.has(id));
              assert.ok(!covered || step.run !== 'require_approval');
              assert.equal(recorded?.decision?.approval, undefined);
            } else {
              assert.equal(last.answer, 'allow');
              assert.equal(recorded?.decision?.approval, undefined);
            }
          }
          // A step the grant does not cover asked a person, saying why.
          for (const id of stepApproved) {
            const step = byId.get(id);
            const request = record.events.findLast(
              (event) => event.type === 'approval.requested' && event.data?.stepId === id,
            );
            if (granted && step?.run === 'require_approval')
              assert.match(String(request?.data?.reason), /^outside the approved plan: /);
          }
          assert.equal((await runtime.verifyJob(job.id))?.ok, true);
        } finally {
          await runtime.close();
        }
      }),
      {
        seed: settings.seed,
        numRuns,
        ...(settings.path === undefined ? {} : { path: settings.path }),
        endOnFailure: false,
      },
    );
  });
});
