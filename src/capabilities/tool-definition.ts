/**
 * The definition behind a capability that calls a tool of another system (an outbound MCP tool,
 * docs/api.md "Pinned tools"): the runtime asks it before each step is authorized, so that the
 * decision binds the tool as it is defined now and a tool that changed since it was pinned never
 * runs. Attached once, by whoever made the capability object, before it is registered; nothing a
 * module author writes on a capability object can attach one or replace it.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { processGlobal } from '../process/process-global.js';
import { capabilityInventory } from './inventory.js';

/** What the runtime reads of a tool's definition. */
export interface ToolDefinition {
  /**
   * The digest (`sha256:<hex>`) of the tool's definition as listed now, when it matches its
   * pin; rejects (TOOL_DEFINITION_CHANGED, or the connection's error) otherwise. May connect.
   */
  pinned(): Promise<string>;
  /** The digest of the definition last listed; undefined before the first listing. */
  seen(): string | undefined;
}

interface ToolDefinitions {
  attach(capability: object, definition: ToolDefinition): void;
  of(capability: object): ToolDefinition | undefined;
}

// One table for every copy of Warrant in the process, as the inventory (src/process/process-global.ts).
const KEY = Symbol.for('warrant.toolDefinitions.v1');
let table: ToolDefinitions | undefined;

function definitions(): ToolDefinitions {
  table ??= processGlobal(KEY, () => {
    const attached = new WeakMap<object, ToolDefinition>();
    return {
      attach(capability, definition) {
        if (attached.has(capability))
          throw createError(
            TypeError,
            ErrorCode.CAPABILITY_DEFINITION_INVALID,
            'A capability has one tool definition, attached once',
          );
        attached.set(capability, definition);
      },
      of: (capability) => attached.get(capability),
    };
  });
  return table;
}

/** Attaches `definition` to `capability` (once: a second attach throws). */
export function attachToolDefinition(capability: object, definition: ToolDefinition): void {
  definitions().attach(capability, definition);
}

/** The definition attached to a capability object, if any. */
export function toolDefinitionOf(capability: object): ToolDefinition | undefined {
  return definitions().of(capability);
}

/** True when the registered capability `name` has a tool definition (an outbound MCP tool). */
export function hasToolDefinition(name: string): boolean {
  const registered = capabilityInventory().get(name);
  return registered !== undefined && toolDefinitionOf(registered.target) !== undefined;
}
