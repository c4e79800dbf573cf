// The contract's measure of plan warrants (API-4 section 25; docs/api.md, "Plan warrants"):
// human decisions for a 10-step plan with 5 reads, 3 writes of known inputs and 2 writes whose
// inputs take an earlier result and are bounded, run to the end, with one approval per step
// (`approval: 'steps'`) and with one plan warrant (`approval: 'plan'`). Every request is decided
// as it comes, by a person other than the submitter, through `decideApproval`; the count is
// checked, not only printed. Also timed, interleaved: the whole job with its decisions, and the
// authorizer calls each way (section 30: the preview asks once per step, once per job). Run:
// npm run bench -- bench/plan/plan-warrant.bench.ts
import assert from 'node:assert/strict';
import {
  OperatorRuntime,
  createCapability,
  type ExecutionPlan,
  type Job,
} from '../../src/index.js';
import { fmt, interleave, machine, median } from '../support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const JOBS = Number(process.env.BENCH_OPERATIONS ?? 50);

let calls = 0;
const runtime = new OperatorRuntime({
  planVersions: ['1.0', '2.0'],
  approvals: { approver: { canApprove: () => true } },
  // The default policy with approvals: reads run, writes ask a person (counted).
  authorizer: {
    authorize: ({ capability, approval }) => {
      calls++;
      return capability.risk === 'read' || approval !== undefined
        ? { decision: 'allow' }
        : { decision: 'require_approval' };
    },
  },
});
runtime.use({
  manifest: {
    name: 'bench-plan-warrant',
    version: '1',
    capabilities: ['bench.quote', 'bench.pay'],
  },
  capabilities: [
    createCapability({
      name: 'bench.quote',
      version: '1',
      description: 'a read that quotes an amount',
      risk: 'read',
      lifecycleLogging: false,
      execute: () => ({ amount: 42 }),
    }),
    createCapability({
      name: 'bench.pay',
      version: '1',
      description: 'a write',
      risk: 'write',
      lifecycleLogging: false,
      execute: () => ({ paid: true }),
    }),
  ],
});

const read = (id: string) => ({ id, capability: 'bench.quote', input: { order: id } });
const known = (id: string, amount: number) => ({
  id,
  capability: 'bench.pay',
  input: { to: id, amount },
});
const bounded = (id: string, from: string) => ({
  id,
  capability: 'bench.pay',
  input: { to: id, amount: { $ref: `steps.${from}.result.amount` } },
  bounds: { amount: { type: 'number' as const, exclusiveMinimum: 0, maximum: 100 } },
});
const PLAN: ExecutionPlan = {
  version: '2.0',
  goal: 'ten steps: five reads, three known writes, two bounded referenced writes',
  steps: [
    read('r1'),
    read('r2'),
    known('w1', 10),
    read('r3'),
    known('w2', 20),
    bounded('w3', 'r2'),
    read('r4'),
    known('w4', 30),
    read('r5'),
    bounded('w5', 'r4'),
  ],
};

/** Runs the plan to its end, deciding every request as it comes; the decisions it took. */
async function decisions(approval: 'steps' | 'plan'): Promise<number> {
  let job: Job = await runtime.executePlan(PLAN, { caller: { id: 'agent' }, approval });
  let decided = 0;
  while (job.status === 'awaiting_approval') {
    const [request] = await runtime.listApprovals({ jobId: job.id });
    if (request === undefined) throw new Error('a waiting job without a request');
    decided++;
    job = await runtime.decideApproval(
      request.kind === 'plan'
        ? {
            kind: 'plan',
            jobId: job.id,
            planDigest: request.planDigest,
            approver: { id: 'person' },
            decision: 'approve',
          }
        : {
            jobId: job.id,
            stepId: request.stepId,
            inputDigest: request.inputDigest,
            approver: { id: 'person' },
            decision: 'approve',
          },
    );
  }
  assert.equal(job.status, 'completed', job.error);
  return decided;
}

calls = 0;
const steps = await decisions('steps');
const stepCalls = calls;
calls = 0;
const plan = await decisions('plan');
const planCalls = calls;
// The contract's measure: 5 human decisions one step at a time, 1 with a plan warrant.
assert.equal(steps, 5);
assert.equal(plan, 1);

const measured = await interleave(
  [
    { name: 'steps', run: () => decisions('steps') },
    { name: 'plan', run: () => decisions('plan') },
  ],
  rounds,
  JOBS,
);
const [byStep, byPlan] = measured.map((subject) => median(subject.samples)) as [number, number];
console.log(`\n${machine()}, ${rounds} rounds x ${JOBS} jobs (memory store)\n`);
console.log('| approval | human decisions | authorizer calls | µs per job, decisions included |');
console.log('| -------- | --------------: | ---------------: | -----------------------------: |');
console.log(`| steps    | ${steps} | ${stepCalls} | ${fmt(byStep, 1)} |`);
console.log(`| plan     | ${plan} | ${planCalls} | ${fmt(byPlan, 1)} |`);
await runtime.close();
