// A worked planner (docs/api.md, "runtime.planSchema"): a goal becomes a plan written by a
// language model against Warrant's plan schema (the AI SDK's generateObject), the plan is
// previewed, submitted as the person it acts for, stops for approval at its write, and runs to
// its result. Any AI SDK model works (README.md next to this file); a refused plan goes back to
// the model with the admission issues (code, path, hint) so it can correct itself.
import { generateObject, jsonSchema, type JSONSchema7, type LanguageModel } from 'ai';
import {
  OperatorRuntime,
  createCapability,
  defineModule,
  isPlanAdmissionError,
  type StepApprovalRequest,
  type ExecutionCaller,
  type ExecutionPlan,
  type Job,
  type PlanAdmissionIssue,
  type PlanPreview,
} from 'warrant';

/** A runtime with a small support desk: two reads and a write that needs approval. */
export function createSupportRuntime(): OperatorRuntime {
  const runtime = new OperatorRuntime({
    planVersions: ['1.0', '2.0'],
    // Who may approve: here anyone but the person the plan acts for (the runtime refuses self-approval).
    approvals: { approver: { canApprove: () => true } },
  });
  runtime.use(
    defineModule('support', '1.0.0', [
      createCapability({
        name: 'crm.customer',
        version: '1.0.0',
        description: 'Looks up a customer: name and email',
        risk: 'read',
        inputSchema: {
          customerId: { type: 'string', required: true, description: 'The customer id' },
        },
        execute: ({ input }) => ({
          name: 'Ada Lovelace',
          email: `${input.customerId}@example.com`,
        }),
      }),
      createCapability({
        name: 'billing.invoice',
        version: '1.0.0',
        description: "Reads a customer's open invoice",
        risk: 'read',
        inputSchema: {
          customerId: { type: 'string', required: true, description: 'The customer id' },
        },
        execute: ({ input }) => ({ invoice: `INV-${input.customerId}`, amountDue: 120 }),
      }),
      createCapability({
        name: 'mail.send',
        version: '1.0.0',
        description: 'Sends an email',
        risk: 'write',
        inputSchema: {
          to: { type: 'string', required: true, description: 'The recipient address' },
          subject: { type: 'string', required: true, description: 'The subject line' },
          body: { type: 'string', required: true, description: 'The text' },
        },
        execute: ({ input }) => ({ sent: true, to: input.to }),
      }),
    ]),
  );
  return runtime;
}

const SYSTEM = `You plan work for Warrant, a runtime that checks and runs plans.
Write one plan for the goal: steps run in order, each calls one capability with its input.
To use an earlier step's result, write the field as { "$ref": "steps.<stepId>.result.<key>" }.
Use only the capabilities the schema offers, and only their input fields.`;

/** The issues of a refused plan, one line each, as the model is told them. */
export function issueLines(issues: readonly PlanAdmissionIssue[]): string {
  return issues
    .map(
      (issue) =>
        `- ${issue.code} at ${issue.path}: ${issue.message}${issue.hint ? ` (${issue.hint})` : ''}`,
    )
    .join('\n');
}

export interface PlannerOptions {
  readonly runtime: OperatorRuntime;
  /** Any AI SDK language model: a provider's model, or a gateway id such as 'openai/gpt-5'. */
  readonly model: LanguageModel;
  readonly goal: string;
  /** The person the plan acts for: the authorizer sees them, and they may not approve it. */
  readonly caller: ExecutionCaller;
  /** Who decides approvals, and what they decide (a person, in a real application). */
  readonly approver: ExecutionCaller;
  readonly approve: (request: StepApprovalRequest) => boolean | Promise<boolean>;
  /** How many plans the model may write before a refusal is final. Default 2. */
  readonly attempts?: number;
  readonly log?: (line: string) => void;
}

/** Asks the model for a plan until admission accepts one; resolves with it and its preview. */
export async function writePlan(
  options: PlannerOptions,
): Promise<{ plan: ExecutionPlan; preview: PlanPreview }> {
  const { runtime, model, goal, caller, attempts = 2, log = () => {} } = options;
  // The schema of an admissible plan for what this runtime registers (newest plan version).
  const schema = runtime.planSchema();
  let prompt = `Goal: ${goal}`;
  for (let attempt = 1; ; attempt++) {
    const { object: plan } = await generateObject({
      model,
      schema: jsonSchema<ExecutionPlan>(schema as JSONSchema7),
      schemaName: 'warrant_plan',
      system: SYSTEM,
      prompt,
    });
    try {
      // Admission and each step's decision, nothing run.
      const preview = await runtime.previewPlan(plan, { caller });
      log(
        `plan ${attempt}: ${plan.steps.map((step) => `${step.id}=${step.capability}`).join(', ')}`,
      );
      return { plan, preview };
    } catch (error) {
      if (!isPlanAdmissionError(error) || attempt >= attempts) throw error;
      log(`plan ${attempt} refused:\n${issueLines(error.issues)}`);
      prompt = `Goal: ${goal}\n\nYour last plan was refused:\n${issueLines(error.issues)}\nWrite the corrected plan.`;
    }
  }
}

/** Goal → plan → preview → submit → approval → result. Resolves with the job as it ended. */
export async function planAndRun(options: PlannerOptions): Promise<Job> {
  const { runtime, caller, approver, approve, log = () => {} } = options;
  const { plan, preview } = await writePlan(options);
  for (const step of preview.steps)
    log(`preview ${step.id}: ${step.outcome}${step.reason ? ` (${step.reason})` : ''}`);
  const { jobId } = await runtime.submitPlan(plan, { caller });
  let job = await runtime.waitForJob(jobId);
  while (job?.status === 'awaiting_approval') {
    const [request] = await runtime.listApprovals({ jobId });
    // This loop decides step requests (a plan submitted with approval: 'plan' has one plan request).
    if (request?.kind !== 'step') break;
    const approved = await approve(request);
    log(
      `${approved ? 'approved' : 'rejected'} ${request.stepId}: ${request.capability} ${JSON.stringify(request.input)}`,
    );
    job = await runtime.decideApproval({
      jobId,
      stepId: request.stepId,
      inputDigest: request.inputDigest,
      approver,
      decision: approved ? 'approve' : 'reject',
    });
  }
  if (job === undefined) throw new Error(`job ${jobId} is not in the store`);
  log(`job ${job.status}${job.status === 'completed' ? `: ${JSON.stringify(job.result)}` : ''}`);
  return job;
}
