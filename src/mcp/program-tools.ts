/**
 * Which capabilities the program (`warrant mcp`, `warrant serve`'s `/mcp`) serves as MCP tools
 * (docs/guide/mcp.md, "A local client over stdio"; docs/decisions.md, "MCP"): the capabilities of
 * `--module` and `--mcp-server`, and the built-ins only with `--builtins`. `system.status`
 * (the Node version and uptime of the process) is never a tool.
 */
import type { CapabilityDescriptor } from '../capabilities/capability.js';

/** The capabilities of the program's built-in modules (src/builtins/). */
export const BUILTIN_CAPABILITIES: readonly string[] = Object.freeze([
  'system.echo',
  'system.status',
  'http.get',
  'http.status',
  'fs.read',
  'fs.write',
  'fs.status',
]);

const BUILTINS: ReadonlySet<string> = new Set(BUILTIN_CAPABILITIES);
const NEVER_SERVED: ReadonlySet<string> = new Set(['system.status']);

/** The `include` option of the program's `McpAdapter`. */
export function programTools(builtins: boolean): (capability: CapabilityDescriptor) => boolean {
  return ({ name }) => !NEVER_SERVED.has(name) && (builtins || !BUILTINS.has(name));
}
