/**
 * Introspection (docs/api.md, "runtime.listCapabilities"): fresh, detached, mutable descriptors built from the
 * frozen registration record on every call. Nothing is invoked and no event is published.
 */
import type { CapabilityDescriptor, CapabilityInputField } from './capability.js';
import { capabilityInventory, type RegisteredCapability } from './inventory.js';
import { toolDefinitionOf } from './tool-definition.js';

function toDescriptor(registered: RegisteredCapability): CapabilityDescriptor {
  const inputSchema: Record<string, CapabilityInputField> = {};
  // A Standard Schema shows the fields derived from its JSON Schema (docs/api.md, "Input schemas").
  for (const field of registered.standard?.fields ?? registered.schema) {
    inputSchema[field.key] = {
      type: field.type,
      required: field.required,
      description: field.description,
    };
  }
  // An outbound MCP tool shows the digest of its definition as last listed (docs/api.md, "Pinned tools").
  const definitionDigest = toolDefinitionOf(registered.target)?.seen();
  return {
    name: registered.name,
    version: registered.version,
    description: registered.description,
    risk: registered.risk,
    inputSchema,
    ...(registered.outputSchema !== undefined && {
      outputSchema: structuredClone(registered.outputSchema) as Record<string, unknown>,
    }),
    ...(definitionDigest !== undefined && { definitionDigest }),
  };
}

/** Every registered capability, in registration order. */
export function listCapabilities(): CapabilityDescriptor[] {
  const descriptors: CapabilityDescriptor[] = [];
  for (const registered of capabilityInventory().list()) descriptors.push(toDescriptor(registered));
  return descriptors;
}

/** Exact, case-sensitive lookup; a supplied version (even `''`) must match. Never throws. */
export function describeCapability(
  name: unknown,
  version?: unknown,
): CapabilityDescriptor | undefined {
  if (typeof name !== 'string') return undefined;
  const registered = capabilityInventory().get(name);
  if (registered === undefined) return undefined;
  if (version !== undefined && version !== registered.version) return undefined;
  return toDescriptor(registered);
}
