/**
 * Fail-closed reading of an authorizer's answer (spec §2.4, §5; API.md §7). `decision` is read
 * once, as an OWN DATA property: an inherited value, a getter, an array or primitive decision,
 * an unknown value or a non-string reason all fail closed. A proxy whose traps throw fails closed.
 */
export type CheckedDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string | undefined }
  | { readonly kind: 'invalid' };

const ALLOW: CheckedDecision = Object.freeze({ kind: 'allow' });
const INVALID: CheckedDecision = Object.freeze({ kind: 'invalid' });

function ownData(target: object, key: string): { value: unknown } | undefined {
  const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
  if (descriptor === undefined || !('value' in descriptor)) return undefined;
  return { value: descriptor.value };
}

export function checkDecision(value: unknown): CheckedDecision {
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return INVALID;
    const decision = ownData(value, 'decision');
    if (decision === undefined) return INVALID;
    if (decision.value === 'allow') return ALLOW;
    if (decision.value !== 'deny') return INVALID;
    // A reason is optional; when present it must be an own string (or undefined) data property.
    const reason = Reflect.getOwnPropertyDescriptor(value, 'reason');
    if (reason === undefined) return { kind: 'deny', reason: undefined };
    if (!('value' in reason)) return INVALID;
    if (reason.value === undefined || typeof reason.value === 'string') {
      return { kind: 'deny', reason: reason.value };
    }
    return INVALID;
  } catch {
    return INVALID;
  }
}
