import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { CapabilityRisk } from '../capabilities/risk.js';

// The caller lives in callers/ (docs/decisions.md, "Callers"); re-exported here, where authorizers
// have always found it.
export type { ExecutionCaller } from '../callers/execution-caller.js';

/** What an authorizer is asked about one step. `input` is the object the capability receives. */
export interface CapabilityAuthorizationContext {
  readonly jobId: string;
  readonly stepId: string;
  readonly capability: Readonly<{ name: string; version: string; risk: CapabilityRisk }>;
  readonly input: unknown;
  readonly caller?: ExecutionCaller;
  /** The granted approval, when the step is asked about again after approval (docs/api.md). */
  readonly approval?: ApprovalGrant;
  /** The digest of `input` as recorded: the decision's `inputDigest` (docs/api.md). */
  readonly inputDigest?: string;
  /**
   * The effect the capability's `prepare` returned, deep-frozen: what the step will do, decided
   * on here (docs/api.md, "Prepared effects"). Absent for a capability without `prepare`.
   */
  readonly effect?: unknown;
  /** `'sha256:'` + hex of the effect's RFC 8785 JSON: the decision's `effectDigest`. */
  readonly effectDigest?: string;
  /** Present (true) only when `runtime.previewPlan` asks: nothing will run (docs/api.md). */
  readonly preview?: true;
  /**
   * An outbound MCP tool's definition digest, matching its pin (docs/api.md, "Pinned tools"):
   * the decision binds the tool as it is defined now.
   */
  readonly definitionDigest?: string;
}

/** A granted approval, as the authorizer sees it on the second ask. */
export interface ApprovalGrant {
  /** The approver's frozen snapshot. */
  readonly approver: ExecutionCaller;
  /** ISO 8601. */
  readonly grantedAt: string;
  /** The digest of the input approved: the approver's own when it edited it. */
  readonly inputDigest: string;
  /** True when the approver approved its own input (docs/api.md, "Approve with edits"). */
  readonly edited?: true;
  /** With `edited`: the digest of the input the request proposed. */
  readonly proposedDigest?: string;
}

/** Only an own `decision: 'allow'` lets a step run; anything else fails closed (docs/api.md, "new OperatorRuntime"). */
export type CapabilityAuthorizationDecision =
  | { decision: 'allow' }
  | { decision: 'deny'; reason?: string }
  /** Only with the runtime's `approvals` option; otherwise malformed (fails closed). */
  | { decision: 'require_approval'; reason?: string };

/** Decides, per step, whether the caller may run this capability with this input. */
export interface ExecutionAuthorizer {
  /**
   * The name the decision record shows as the step's `authorizer` (docs/api.md, "The decision
   * record"): read only when it is the object's own string data property.
   */
  readonly name?: string;
  authorize(
    context: CapabilityAuthorizationContext,
  ): CapabilityAuthorizationDecision | Promise<CapabilityAuthorizationDecision>;
}
