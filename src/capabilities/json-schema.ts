/**
 * The JSON Schema of a registered capability's input, for MCP tools (docs/api.md, "Input
 * schemas"): the vendor's own (Standard JSON Schema, `~standard.jsonSchema`) when the input
 * schema provides one, else the one built from the field record. Fresh on every call.
 */
import type { CompiledSchema } from './input-schema.js';
import { capabilityInventory } from './inventory.js';

/** The field record as JSON Schema: types, descriptions, the required list. */
function fromFields(fields: CompiledSchema): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const field of fields) {
    properties[field.key] = { type: field.type, description: field.description };
    if (field.required) required.push(field.key);
  }
  return { type: 'object', properties, ...(required.length > 0 && { required }) };
}

/**
 * The full JSON Schema of the input of the registered capability `name` (a fresh, detached
 * object), or undefined when no capability has that name. Calls nothing of the capability: the
 * vendor's JSON Schema was taken, as a JSON copy, when the capability was registered.
 */
export function capabilityInputJsonSchema(name: string): Record<string, unknown> | undefined {
  const registered = capabilityInventory().get(name);
  if (registered === undefined) return undefined;
  const vendor = registered.standard?.jsonSchema;
  if (vendor !== undefined) return structuredClone(vendor) as Record<string, unknown>;
  return fromFields(registered.standard?.fields ?? registered.schema);
}
