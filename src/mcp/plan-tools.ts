/**
 * The MCP plan tools (docs/api.md, "new McpAdapter", `planTools: true`): `warrant_preview_plan
 * { plan }` and `warrant_submit_plan { plan, idempotencyKey?, approval? }`, so that a model
 * proposes a whole plan (steps with result references) instead of one tool call at a time. Their
 * `plan` argument is described by `runtime.planSchema()`; admission still decides, and a refused
 * plan is a tool result with `isError` and the issues (code, path, hint) a model can act on,
 * never a protocol error. Like the rest of the adapter: parse, call the runtime, format.
 */
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import { ErrorCode } from '../errors/error-codes.js';
import type { CapabilityRisk } from '../capabilities/capability.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { Job } from '../jobs/job.js';
import { answerText, errorText, REMOTE_ANSWER } from '../json/answer.js';
import type { ExecutionPlan } from '../plan/execution-plan.js';
import { isPlanAdmissionError } from '../plan/plan-admission-error.js';
import type { OperatorRuntime } from '../runtime/operator-runtime.js';

export const PREVIEW_PLAN_TOOL = 'warrant_preview_plan';
export const SUBMIT_PLAN_TOOL = 'warrant_submit_plan';

/** The names the plan tools take: no capability's tool may have one while they are served. */
export const PLAN_TOOLS: readonly string[] = Object.freeze([PREVIEW_PLAN_TOOL, SUBMIT_PLAN_TOOL]);

/** The longest idempotency key a call may carry (keys are ids, not documents). */
const MAX_KEY_CHARS = 200;

type JsonObject = Record<string, unknown>;

/**
 * A tool's input schema with the plan schema as its `plan` property. The plan schema's `$defs`
 * move to the tool schema's root, where its `#/$defs/...` pointers then resolve; its `$schema`
 * is left out (MCP input schemas are draft 2020-12 already).
 */
function withPlan(planSchema: JsonObject, more: JsonObject): Tool['inputSchema'] {
  const plan = structuredClone(planSchema);
  const definitions = plan.$defs;
  delete plan.$schema;
  delete plan.$defs;
  const schema: JsonObject = {
    type: 'object',
    properties: { plan, ...more },
    required: ['plan'],
    ...(definitions !== undefined && { $defs: definitions }),
  };
  return schema as Tool['inputSchema'];
}

/** What submitting may do: the highest risk among the capabilities the plan schema offers. */
function submitAnnotations(risks: readonly CapabilityRisk[]): ToolAnnotations {
  if (risks.includes('destructive')) return { readOnlyHint: false, destructiveHint: true };
  if (risks.includes('write')) return { readOnlyHint: false, destructiveHint: false };
  return { readOnlyHint: true };
}

/**
 * The `tools/list` entries of the plan tools, fresh objects on every call. `planSchema` is
 * `runtime.planSchema()` for the adapter's capabilities; `risks` are theirs.
 */
export function planToolListings(planSchema: JsonObject, risks: readonly CapabilityRisk[]): Tool[] {
  return [
    {
      name: PREVIEW_PLAN_TOOL,
      description:
        'Check a Warrant plan without running anything: admission (steps, capabilities, inputs, result references) and how each step would be decided (allow, deny, require_approval; unknown for a step whose input waits on an earlier result). A refused plan answers isError with issues, each with code, path (a JSON pointer into the plan) and hint: correct the plan and preview again.',
      inputSchema: withPlan(planSchema, {}),
      annotations: { readOnlyHint: true },
    },
    {
      name: SUBMIT_PLAN_TOOL,
      description:
        'Submit a Warrant plan to run as you: its steps run in order, each authorized at its turn; an input field may take an earlier step\'s result as { "$ref": "steps.<id>.result.<key>" }. Answers { jobId, status, awaiting? }: follow the job with warrant_job_status. A refused plan answers isError with issues (code, path, hint), and nothing runs. With approval plan, a person approves the whole plan once (awaiting { kind: plan, planDigest }); bounds on a step say what its referenced fields may hold.',
      inputSchema: withPlan(planSchema, {
        idempotencyKey: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_KEY_CHARS,
          description: 'The same key again (same caller, same plan) answers the first job',
        },
        approval: {
          type: 'string',
          enum: ['steps', 'plan'],
          description:
            'steps (the default): each step that needs approval asks for it at its turn; plan: every step is previewed first, a step previewed deny refuses the whole plan (PLAN_DENIED), otherwise one approval for the whole plan before any step runs',
        },
      }),
      annotations: submitAnnotations(risks),
    },
  ];
}

/** The arguments of one plan tool call, or the one-line reason they are refused. */
export type PlanToolArgs =
  | { readonly tool: typeof PREVIEW_PLAN_TOOL; readonly plan: unknown }
  | {
      readonly tool: typeof SUBMIT_PLAN_TOOL;
      readonly plan: unknown;
      readonly idempotencyKey: string | undefined;
      readonly approval: 'steps' | 'plan' | undefined;
    };

export function readPlanToolArgs(tool: string, args: unknown): PlanToolArgs | { problem: string } {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return { problem: 'Invalid arguments: expected an object with plan' };
  const { plan, idempotencyKey, approval } = args as JsonObject;
  if (tool === PREVIEW_PLAN_TOOL) return { tool, plan };
  if (
    idempotencyKey !== undefined &&
    (typeof idempotencyKey !== 'string' ||
      idempotencyKey === '' ||
      idempotencyKey.length > MAX_KEY_CHARS)
  )
    return {
      problem: `Invalid arguments: idempotencyKey must be a string of 1 to ${MAX_KEY_CHARS} characters`,
    };
  // 'plan': a plan warrant (docs/api.md, "Plan warrants").
  if (approval !== undefined && approval !== 'steps' && approval !== 'plan')
    return { problem: "Invalid arguments: approval must be 'steps' or 'plan' when present" };
  return {
    tool: SUBMIT_PLAN_TOOL,
    plan,
    idempotencyKey: idempotencyKey as string | undefined,
    approval,
  };
}

function structured(content: JsonObject, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: answerText(content) }],
    structuredContent: content,
    ...(isError && { isError: true }),
  };
}

/** What a submitted job answers: `{ jobId, status, awaiting?, replayed? }`. */
function submittedContent(job: Job, replayed: boolean): JsonObject {
  const content: JsonObject = { jobId: job.id, status: job.status };
  const waiting = job.steps.find((step) => step.status === 'awaiting_approval');
  const plan = job.status === 'awaiting_approval' ? planRequestDigest(job) : undefined;
  if (plan !== undefined) {
    // One request for the whole plan (docs/api.md, "Plan warrants").
    content.awaiting = { kind: 'plan', planDigest: plan };
  } else if (job.status === 'awaiting_approval' && waiting !== undefined) {
    const digest = waiting.decision?.inputDigest;
    content.awaiting = {
      kind: 'step',
      stepId: waiting.id,
      ...(typeof digest === 'string' && { inputDigest: digest }),
    };
  }
  // A plan refused at its preview: the model reads why, and may correct its plan.
  if (job.error?.startsWith(`${ErrorCode.PLAN_DENIED}:`) === true) {
    content.code = ErrorCode.PLAN_DENIED;
    content.error = errorText(job.error, REMOTE_ANSWER);
  }
  if (replayed) content.replayed = true;
  return content;
}

/** The planDigest of the job's pending plan request, when its first step holds one. */
function planRequestDigest(job: Job): string | undefined {
  const holder = job.steps[0];
  if (holder?.status !== 'awaiting_approval' || holder.decision !== undefined) return undefined;
  for (let at = job.events.length - 1; at >= 0; at--) {
    const data = job.events[at]?.data;
    if (job.events[at]?.type !== 'approval.requested' || data?.stepId !== holder.id) continue;
    return data.kind === 'plan' && typeof data.planDigest === 'string'
      ? data.planDigest
      : undefined;
  }
  return undefined;
}

/**
 * Runs one plan tool call as `caller`. An admission refusal and an idempotency conflict are tool
 * errors with their details; anything else is thrown, for the adapter to answer. With `waitMs` a
 * submitted job is waited for at most that long (the adapter's option), else answered as recorded.
 */
export async function callPlanTool(
  runtime: OperatorRuntime,
  args: PlanToolArgs,
  caller: ExecutionCaller | undefined,
  waitMs: number | undefined,
): Promise<CallToolResult> {
  const plan = args.plan as ExecutionPlan;
  try {
    if (args.tool === PREVIEW_PLAN_TOOL) {
      const preview = await runtime.previewPlan(plan, { caller });
      // Reasons are the authorizer's text: one line each at this edge, as over HTTP.
      const steps = preview.steps.map((step) =>
        step.reason === undefined
          ? step
          : { ...step, reason: errorText(step.reason, REMOTE_ANSWER) },
      );
      return structured({ steps });
    }
    const { jobId, replayed } = await runtime.submitPlan(plan, {
      caller,
      ...(args.idempotencyKey !== undefined && { idempotencyKey: args.idempotencyKey }),
      ...(args.approval !== undefined && { approval: args.approval }),
    });
    const job =
      waitMs === undefined
        ? await runtime.getJob(jobId)
        : await runtime.waitForJob(jobId, { timeoutMs: waitMs });
    if (job === undefined) throw new Error(`The submitted job ${jobId} is not in the store`);
    return structured(submittedContent(job, replayed));
  } catch (error) {
    if (isPlanAdmissionError(error)) {
      return structured(
        {
          error: errorText(error.message, REMOTE_ANSWER),
          code: error.code,
          issues: error.issues.map((issue) => ({
            ...issue,
            message: errorText(issue.message, REMOTE_ANSWER),
          })),
        },
        true,
      );
    }
    // approval 'plan' on a runtime without approvals (docs/api.md, "Plan warrants").
    if ((error as { code?: unknown } | null)?.code === ErrorCode.EXECUTE_OPTIONS_INVALID) {
      return structured(
        {
          error: errorText((error as Error).message, REMOTE_ANSWER),
          code: ErrorCode.EXECUTE_OPTIONS_INVALID,
        },
        true,
      );
    }
    if ((error as { code?: unknown } | null)?.code === ErrorCode.IDEMPOTENCY_CONFLICT) {
      return structured(
        {
          error: errorText((error as Error).message, REMOTE_ANSWER),
          code: ErrorCode.IDEMPOTENCY_CONFLICT,
        },
        true,
      );
    }
    throw error;
  }
}
