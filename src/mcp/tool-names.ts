/**
 * MCP tool names (docs/decisions.md, "MCP"): `[A-Za-z0-9_-]`, 1 to 128 characters, because
 * popular clients refuse any other character (dots included). By default every other character
 * of the capability name becomes `_`; `options.toolName` chooses instead. Two capabilities that
 * end up with one tool name are an error when the adapter is built, never a silent shadowing.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { describeThrown, describeValue, quoteText } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';

/** What `options.toolName` is told about each capability it names. */
export interface McpToolNameRequest {
  readonly name: string;
  readonly version: string;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** The default tool name: each character outside `[A-Za-z0-9_-]` becomes `_`. */
export function defaultToolName({ name }: McpToolNameRequest): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

function invalidName(message: string): TypeError {
  return createError(TypeError, ErrorCode.MCP_TOOL_NAME_INVALID, message);
}

/** One capability's tool name, from `toolName` (or the default), checked. */
function toolNameOf(
  capability: McpToolNameRequest,
  toolName: (request: McpToolNameRequest) => unknown,
): string {
  let chosen: unknown;
  try {
    chosen = toolName(Object.freeze({ name: capability.name, version: capability.version }));
  } catch (error) {
    throw invalidName(
      `options.toolName threw for capability ${quoteText(capability.name)}: ${describeThrown(error)}`,
    );
  }
  if (typeof chosen !== 'string' || !TOOL_NAME.test(chosen)) {
    throw invalidName(
      `The MCP tool name of capability ${quoteText(capability.name)} must be 1 to 128 characters of A-Z, a-z, 0-9, _ and -, got ${describeValue(chosen)}` +
        (toolName === defaultToolName ? '; choose one with options.toolName' : ''),
    );
  }
  return chosen;
}

/**
 * Names every capability's tool: a Map from tool name to capability (null-prototype safe, any
 * string is a key like any other), in the order given.
 * @throws TypeError MCP_TOOL_NAME_INVALID for a name outside the charset, MCP_TOOL_NAME_COLLISION
 * when two capabilities get one tool name.
 */
export function assignToolNames<C extends McpToolNameRequest>(
  capabilities: readonly C[],
  toolName: (request: McpToolNameRequest) => unknown = defaultToolName,
): Map<string, C> {
  const named = new Map<string, C>();
  for (const capability of capabilities) {
    const name = toolNameOf(capability, toolName);
    const taken = named.get(name);
    if (taken !== undefined) {
      throw createError(
        TypeError,
        ErrorCode.MCP_TOOL_NAME_COLLISION,
        `Capabilities ${quoteText(taken.name)} and ${quoteText(capability.name)} would both be the MCP tool ${quoteText(name)}; rename one or choose names with options.toolName`,
      );
    }
    named.set(name, capability);
  }
  return named;
}
