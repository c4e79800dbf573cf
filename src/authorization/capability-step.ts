/**
 * Narrowing an authorizer's `input` per capability without casts (docs/api.md, "Typed policies").
 * The runtime hands the authorizer the input the capability's schema produced, so a step whose
 * capability is the registered `capability` (same name and version) has exactly its input type.
 */
import type { Capability } from '../capabilities/capability.js';
import type { CapabilityAuthorizationContext } from './authorizer.js';

/** The context of a step of `Input`'s capability: `input` typed. */
export type CapabilityStepContext<Input> = CapabilityAuthorizationContext & {
  readonly input: Input;
};

/**
 * True when the step being authorized runs `capability` (the object you registered, or one of
 * the same name and version); `context.input` is then typed as that capability's input.
 */
export function isCapabilityStep<Input>(
  context: CapabilityAuthorizationContext,
  capability: Pick<Capability<Input, unknown>, 'name' | 'version' | 'execute'>,
): context is CapabilityStepContext<Input> {
  return (
    context.capability.name === capability.name && context.capability.version === capability.version
  );
}
