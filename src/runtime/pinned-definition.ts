/**
 * The definition a step of an outbound MCP tool runs under (docs/api.md, "Pinned tools"), read
 * after the input check and before the authorizer: the digest the decision, the authorizer's
 * context and Cedar bind, or the step's failure (TOOL_DEFINITION_CHANGED, or the connection's
 * error) with nothing asked or sent downstream. A step approved earlier also needs the definition
 * the approval was requested under.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { describeThrown } from '../errors/describe-value.js';
import { toolDefinitionOf, type ToolDefinition } from '../capabilities/tool-definition.js';
import type { RegisteredCapability } from '../capabilities/inventory.js';

/** The digest a step runs under, or why it cannot run. */
export type PinnedDefinition = { readonly digest: string } | { readonly error: string };

async function check(
  definition: ToolDefinition,
  requested: string | undefined,
): Promise<PinnedDefinition> {
  let digest: string;
  try {
    digest = await definition.pinned();
  } catch (error) {
    return { error: describeThrown(error) };
  }
  if (requested !== undefined && requested !== digest) {
    return {
      error: `${ErrorCode.TOOL_DEFINITION_CHANGED}: the tool's definition changed since approval was requested (${requested}, now ${digest})`,
    };
  }
  return { digest };
}

/**
 * Undefined, with no promise, for a capability without a tool definition (every capability but
 * an outbound MCP tool); else the digest its step runs under, or the step's error. `requested`:
 * the digest the step's approval was requested under, when the step runs with one.
 */
export function pinnedDefinition(
  capability: RegisteredCapability,
  requested: string | undefined,
): Promise<PinnedDefinition> | undefined {
  const definition = toolDefinitionOf(capability.target);
  return definition === undefined ? undefined : check(definition, requested);
}
