/**
 * `warrant mcp pin --mcp-server <name>=<command line> [--pins <file>]` (docs/api.md, "Pinned
 * tools"): connects to each server, lists its tools and writes their definition digests to the
 * pins file, replacing what the file pinned for those servers and keeping the others. Prints
 * each tool pinned on stdout.
 */
import { existsSync } from 'node:fs';
import { listMcpTools, type ListedMcpTool } from '../../mcp/outbound.js';
import { writeErr, writeOut } from '../output.js';
import { parseCommand, text } from '../parse.js';
import { DEFAULT_PINS_FILE, readPinsFile, writePinsFile } from '../pins-file.js';
import { mcpServersOf } from '../program-runtime.js';
import { firstLine, UsageError } from '../usage-error.js';

export const mcpPinHelp = `Usage: warrant mcp pin --mcp-server <name>=<command line> [--pins <file>]

Connects to each downstream MCP server, lists its tools and writes the digest of each tool's
definition (its name, description, input and output schemas and annotations) to the pins file:
the servers named here are pinned anew, the others the file holds are kept. Prints each tool
pinned. Run it after reviewing the tools; then "warrant run", "serve", "mcp" and "worker" with
--pins <file> refuse a tool whose definition is not the one pinned, or is not pinned
(TOOL_DEFINITION_CHANGED; docs/guide/mcp.md, "Pin the tools you call").
Exit codes: 0 written; 1 a server could not be reached or listed (nothing written); 2 bad usage
(options, a pins file that cannot be read or written).

Options:
  --mcp-server <name>=<command line>
                        a downstream MCP server over stdio (repeatable, at least one)
  --pins <file>         the pins file (default: ${DEFAULT_PINS_FILE})
  -h, --help            show this help`;

/** Runs `warrant mcp pin <args>`; resolves with the exit code. */
export async function mcpPinCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    'mcp-server': { type: 'string', multiple: true },
    pins: { type: 'string' },
  });
  if (values.help) {
    console.log(mcpPinHelp);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const servers = mcpServersOf({ 'mcp-server': values['mcp-server'] as string[] | undefined });
  if (servers.size === 0)
    throw new UsageError('warrant mcp pin needs --mcp-server <name>=<command line>');
  const file = text(values, 'pins') ?? DEFAULT_PINS_FILE;
  const pins = new Map(existsSync(file) ? readPinsFile(file) : []);
  const listed = new Map<string, ListedMcpTool[]>();
  for (const [name, target] of servers) {
    try {
      listed.set(name, await listMcpTools(target));
    } catch (error) {
      writeErr(`warrant mcp pin: ${name}: ${firstLine(error)}\n`);
      return 1;
    }
  }
  for (const [name, tools] of listed) {
    pins.set(name, new Map(tools.map(({ tool, definitionDigest }) => [tool, definitionDigest])));
  }
  writePinsFile(file, pins);
  for (const [name, tools] of listed) {
    for (const { tool, definitionDigest } of tools)
      writeOut(`${name}.${tool} ${definitionDigest}\n`);
    if (tools.length === 0) writeErr(`warrant mcp pin: ${name} lists no tools\n`);
  }
  writeErr(`warrant mcp pin: wrote ${file}\n`);
  return 0;
}
