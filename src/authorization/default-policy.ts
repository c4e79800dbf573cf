import type {
  CapabilityAuthorizationContext,
  CapabilityAuthorizationDecision,
  ExecutionAuthorizer,
} from './authorizer.js';

// docs/api.md, "new OperatorRuntime": the exact messages of the default policy.
const WRITE_REASON = 'Write capability requires explicit approval.';
const DESTRUCTIVE_REASON = 'Destructive capability requires explicit approval.';
const ALLOW: CapabilityAuthorizationDecision = Object.freeze({ decision: 'allow' });
const DENY_WRITE: CapabilityAuthorizationDecision = Object.freeze({
  decision: 'deny',
  reason: WRITE_REASON,
});
const DENY_DESTRUCTIVE: CapabilityAuthorizationDecision = Object.freeze({
  decision: 'deny',
  reason: DESTRUCTIVE_REASON,
});

/** Reads are allowed; writes and destructive work are denied until the host configures otherwise. */
export const defaultAuthorizer: ExecutionAuthorizer = Object.freeze({
  authorize({ capability }: CapabilityAuthorizationContext): CapabilityAuthorizationDecision {
    if (capability.risk === 'read') return ALLOW;
    return capability.risk === 'write' ? DENY_WRITE : DENY_DESTRUCTIVE;
  },
});

// With approvals on, the same reasons now name what the step waits for.
const REQUIRE_WRITE: CapabilityAuthorizationDecision = Object.freeze({
  decision: 'require_approval',
  reason: WRITE_REASON,
});
const REQUIRE_DESTRUCTIVE: CapabilityAuthorizationDecision = Object.freeze({
  decision: 'require_approval',
  reason: DESTRUCTIVE_REASON,
});

/**
 * The default policy with approvals on: reads allowed; writes and destructive work require
 * approval, and are allowed once the context carries a granted approval (docs/api.md).
 */
export const defaultApprovalAuthorizer: ExecutionAuthorizer = Object.freeze({
  authorize({
    capability,
    approval,
  }: CapabilityAuthorizationContext): CapabilityAuthorizationDecision {
    if (capability.risk === 'read' || approval !== undefined) return ALLOW;
    return capability.risk === 'write' ? REQUIRE_WRITE : REQUIRE_DESTRUCTIVE;
  },
});
