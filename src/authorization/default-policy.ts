import type {
  CapabilityAuthorizationContext,
  CapabilityAuthorizationDecision,
  ExecutionAuthorizer,
} from './authorizer.js';

// docs/api.md, "new OperatorRuntime": the exact messages of the default policy.
const ALLOW: CapabilityAuthorizationDecision = Object.freeze({ decision: 'allow' });
const DENY_WRITE: CapabilityAuthorizationDecision = Object.freeze({
  decision: 'deny',
  reason: 'Write capability requires explicit approval.',
});
const DENY_DESTRUCTIVE: CapabilityAuthorizationDecision = Object.freeze({
  decision: 'deny',
  reason: 'Destructive capability requires explicit approval.',
});

/** Reads are allowed; writes and destructive work are denied until the host configures otherwise. */
export const defaultAuthorizer: ExecutionAuthorizer = Object.freeze({
  authorize({ capability }: CapabilityAuthorizationContext): CapabilityAuthorizationDecision {
    if (capability.risk === 'read') return ALLOW;
    return capability.risk === 'write' ? DENY_WRITE : DENY_DESTRUCTIVE;
  },
});
