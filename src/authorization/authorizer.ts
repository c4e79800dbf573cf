import type { CapabilityRisk } from '../capabilities/risk.js';

/** Who asked for the plan. The runtime keeps a frozen snapshot for the whole job. */
export interface ExecutionCaller {
  readonly id?: string;
  readonly scopes?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** What an authorizer is asked about one step. `input` is the object the capability receives. */
export interface CapabilityAuthorizationContext {
  readonly jobId: string;
  readonly stepId: string;
  readonly capability: Readonly<{ name: string; version: string; risk: CapabilityRisk }>;
  readonly input: unknown;
  readonly caller?: ExecutionCaller;
}

/** Only an own `decision: 'allow'` lets a step run; anything else fails closed (docs/api.md, "new OperatorRuntime"). */
export type CapabilityAuthorizationDecision =
  { decision: 'allow' } | { decision: 'deny'; reason?: string };

/** Decides, per step, whether the caller may run this capability with this input. */
export interface ExecutionAuthorizer {
  authorize(
    context: CapabilityAuthorizationContext,
  ): CapabilityAuthorizationDecision | Promise<CapabilityAuthorizationDecision>;
}
