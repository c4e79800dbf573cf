/**
 * Fail-closed reading of an authorizer's answer (docs/api.md, `executePlan`; SECURITY.md). Only a
 * non-null, non-array object with an OWN property `decision` equal to `'allow'` allows. The
 * property is read once: a data property's value, or an own accessor's getter called exactly
 * once (its answer is the decision). An inherited value, a missing or throwing getter, an array
 * or primitive decision, an unknown value or a non-string reason all fail closed, and so does a
 * proxy whose traps throw.
 */
export type CheckedDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string | undefined }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'require_approval'; readonly reason: string | undefined };

const ALLOW: CheckedDecision = Object.freeze({ kind: 'allow' });
const INVALID: CheckedDecision = Object.freeze({ kind: 'invalid' });

/** The value of an own property, read once, or undefined when there is no own property. */
function readOwn(target: object, key: string): { value: unknown } | undefined {
  const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
  if (descriptor === undefined) return undefined;
  if ('value' in descriptor) return { value: descriptor.value };
  // An own accessor: its getter, called once on the answer itself (no getter: undefined).
  const getter = descriptor.get;
  return { value: getter === undefined ? undefined : Reflect.apply(getter, target, []) };
}

/**
 * `require_approval` is a decision only when the runtime has approvals on (`approvals`);
 * otherwise it is malformed like any unknown value (docs/api.md, "Approvals").
 */
export function checkDecision(value: unknown, approvals = false): CheckedDecision {
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return INVALID;
    const decision = readOwn(value, 'decision');
    if (decision === undefined) return INVALID;
    if (decision.value === 'allow') return ALLOW;
    const requiresApproval = approvals && decision.value === 'require_approval';
    if (decision.value !== 'deny' && !requiresApproval) return INVALID;
    // A reason is optional; when present it must be an own string (or undefined), read once.
    const reason = readOwn(value, 'reason');
    const kind = requiresApproval ? 'require_approval' : 'deny';
    if (reason === undefined || reason.value === undefined) return { kind, reason: undefined };
    return typeof reason.value === 'string' ? { kind, reason: reason.value } : INVALID;
  } catch {
    return INVALID;
  }
}
