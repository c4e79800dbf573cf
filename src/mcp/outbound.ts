/**
 * Outbound MCP (docs/errors.md, "Outbound MCP capabilities"): a tool of a downstream MCP server wrapped
 * as a Capability, so each call goes through admission, the authorizer and the job record like
 * any other step. Internal: the package root does not export it (docs/api.md); the program wires
 * it. Connections are pooled per downstream server, opened on first call and closed by
 * `closeMcpConnections()`. Each tool is pinned (docs/api.md, "Pinned tools"): its steps run only
 * while the server lists the definition its pin names.
 */
// The client SDK (with cross-spawn and eventsource) loads with the first connection, not with
// the program: `warrant serve` and `warrant run` without `--mcp-server` never load it
// (docs/decisions.md, "Light import").
import { ErrorCode } from '../errors/error-codes.js';
import type { Client, Transport } from '@modelcontextprotocol/client';
import { describeThrown, describeValue } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
// The modules the package root re-exports, not the root itself: the root re-exports mcp/, so
// importing it back would tie the two folders in a cycle (docs/decisions.md, "House rules").
import type {
  Capability,
  CapabilityInputField,
  CapabilityRisk,
} from '../capabilities/capability.js';
import { createCapability } from '../capabilities/create-capability.js';
import { attachToolDefinition } from '../capabilities/tool-definition.js';
import {
  DIGEST_PATTERN,
  ServerDefinitions,
  toolDefinitionDigest,
  type ToolPin,
} from './tool-pins.js';

/** A downstream MCP server: a command spoken to over stdio, or a Streamable HTTP endpoint. */
export type McpServerTarget =
  | {
      readonly command: string;
      readonly args?: readonly string[];
      /** Added to the SDK's safe default environment (PATH, HOME, ...), not to all of ours. */
      readonly env?: Readonly<Record<string, string>>;
      readonly cwd?: string;
    }
  | { readonly url: string | URL };

/** What `createMcpCapability` takes. */
export interface McpCapabilityDefinition {
  /** The Warrant capability name (what plans and authorizers see). */
  readonly name: string;
  /** Default `'1.0.0'`. */
  readonly version?: string;
  /** Default: `MCP tool "<tool>" of <server>`. */
  readonly description?: string;
  /** Required, exactly `'read'`, `'write'` or `'destructive'`: nothing is assumed (docs/errors.md). */
  readonly risk: CapabilityRisk;
  readonly server: McpServerTarget;
  /** How messages name the server (the program: its `--mcp-server` name); default its command or origin. */
  readonly serverName?: string;
  /** The tool name on the downstream server. */
  readonly tool: string;
  /** Fields admission checks before the call (Warrant's field contract, not JSON Schema). */
  readonly inputSchema?: Record<string, CapabilityInputField>;
  readonly timeoutMs?: number;
  /**
   * The digest the tool's definition must have (a pins file's, docs/api.md "Pinned tools"); `null`:
   * a pins file is in force and does not pin this tool, so its steps always fail. Absent: the
   * first definition this process sees is pinned. A step of a tool whose listed definition is not
   * its pin fails with TOOL_DEFINITION_CHANGED before it is authorized.
   */
  readonly pin?: string | null;
}

interface ToolResult {
  readonly content?: readonly { readonly type: string; readonly text?: unknown }[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
}

const RISKS: readonly unknown[] = ['read', 'write', 'destructive'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalidDefinition(message: string): TypeError {
  return createError(TypeError, ErrorCode.MCP_CAPABILITY_DEFINITION_INVALID, message);
}

/** Validates a target and returns its pool key: equal targets share one connection. */
function targetKey(target: unknown): string {
  if (!isObject(target)) {
    throw invalidDefinition(
      `createMcpCapability() server must be { command, args? } or { url }, got ${describeValue(target)}`,
    );
  }
  if ('url' in target) {
    const { url } = target;
    if (!(url instanceof URL) && typeof url !== 'string')
      throw invalidDefinition(`createMcpCapability() server.url must be a URL or a string`);
    try {
      return JSON.stringify(['http', new URL(url).href]);
    } catch {
      throw invalidDefinition(
        `createMcpCapability() server.url is not a URL: ${describeValue(url)}`,
      );
    }
  }
  const { command, args = [], env = {}, cwd } = target;
  if (typeof command !== 'string' || command === '')
    throw invalidDefinition('createMcpCapability() server.command must be a non-empty string');
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string'))
    throw invalidDefinition('createMcpCapability() server.args must be an array of strings');
  if (!isObject(env) || !Object.values(env).every((value) => typeof value === 'string'))
    throw invalidDefinition('createMcpCapability() server.env must map names to strings');
  if (cwd !== undefined && typeof cwd !== 'string')
    throw invalidDefinition('createMcpCapability() server.cwd must be a string');
  return JSON.stringify(['stdio', command, args, Object.entries(env).sort(), cwd ?? null]);
}

function describeTarget(target: McpServerTarget): string {
  return 'url' in target ? new URL(target.url).origin : JSON.stringify(target.command);
}

async function createTransport(target: McpServerTarget): Promise<Transport> {
  if ('url' in target) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    return new StreamableHTTPClientTransport(new URL(target.url));
  }
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  return new StdioClientTransport({
    command: target.command,
    args: [...(target.args ?? [])],
    ...(target.env !== undefined && { env: { ...target.env } }),
    ...(target.cwd !== undefined && { cwd: target.cwd }),
  });
}

/**
 * One client per downstream server, connected on first use and again after the link drops. A
 * connection lists the server's tools when it opens, and again on each
 * `notifications/tools/list_changed` (docs/api.md, "Pinned tools"); a step waits for a listing
 * under way, so it never runs under a definition the server has announced it changed.
 */
class McpServerConnection {
  readonly #target: McpServerTarget;
  readonly #definitions: ServerDefinitions;
  #client: Promise<Client> | undefined;
  /** The listings, one after another: settled when the last one asked for is done. */
  #listing: Promise<void> = Promise.resolve();
  /** A listing after a change is queued and has not started: another change joins it. */
  #relistQueued = false;

  constructor(target: McpServerTarget, definitions: ServerDefinitions) {
    this.#target = target;
    this.#definitions = definitions;
  }

  /** Connected, with the tools listed after every change announced so far. */
  async listed(): Promise<Client> {
    const client = await this.#connect();
    await this.#listing;
    return client;
  }

  async callTool(
    client: Client,
    tool: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ) {
    return (await client.callTool({ name: tool, arguments: input }, { signal })) as ToolResult;
  }

  async close(): Promise<void> {
    const pending = this.#client;
    this.#client = undefined;
    if (pending === undefined) return;
    const client = await pending.catch(() => undefined);
    await client?.close();
  }

  #connect(): Promise<Client> {
    if (this.#client !== undefined) return this.#client;
    const dropped = () => {
      if (this.#client === opening) this.#client = undefined;
    };
    const opening: Promise<Client> = this.#open(dropped).catch((error: unknown) => {
      dropped();
      throw createError(
        Error,
        ErrorCode.MCP_SERVER_UNAVAILABLE,
        `MCP server ${describeTarget(this.#target)} could not be reached: ${describeThrown(error)}`,
        error,
      );
    });
    this.#client = opening;
    return opening;
  }

  async #open(dropped: () => void): Promise<Client> {
    const { Client } = await import('@modelcontextprotocol/client');
    const client = new Client({ name: 'warrant', version: '0.2.0' });
    // A dropped link (the server exited) is reopened by the next call, not reused.
    client.onclose = dropped;
    // Heard whether or not the server declares `tools.listChanged`: a change is never ignored.
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      this.#relist(client);
    });
    await client.connect(await createTransport(this.#target));
    try {
      await this.#queue(() => this.#list(client, 'connected'));
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    return client;
  }

  #queue(listing: () => Promise<void>): Promise<void> {
    const next = this.#listing.then(listing);
    this.#listing = next.catch(() => {});
    return next;
  }

  async #list(client: Client, cause: 'connected' | 'list_changed'): Promise<void> {
    const { tools } = await client.listTools(undefined, { cacheMode: 'refresh' });
    const digests = new Map<string, string>();
    for (const tool of tools) digests.set(tool.name, toolDefinitionDigest(tool));
    this.#definitions.listed(digests, cause);
  }

  /**
   * Lists the tools again after the server said they changed. A listing that fails refuses every
   * tool and closes the link: the next step connects and lists again.
   */
  #relist(client: Client): void {
    if (this.#relistQueued) return;
    this.#relistQueued = true;
    void this.#queue(async () => {
      this.#relistQueued = false;
      try {
        await this.#list(client, 'list_changed');
      } catch (error) {
        this.#definitions.unlisted(describeThrown(error));
        await client.close().catch(() => {});
      }
    });
  }
}

// Module state of the program's process (the library never creates connections by itself).
const connections = new Map<string, McpServerConnection>();
/** The pins and listings of each downstream server: they outlive its connections. */
const servers = new Map<string, ServerDefinitions>();

function definitionsOf(key: string, target: McpServerTarget, name?: string): ServerDefinitions {
  let definitions = servers.get(key);
  if (definitions === undefined) {
    definitions = new ServerDefinitions(
      `MCP server ${name === undefined ? describeTarget(target) : JSON.stringify(name)}`,
    );
    servers.set(key, definitions);
  }
  return definitions;
}

function connectionFor(key: string, target: McpServerTarget): McpServerConnection {
  let connection = connections.get(key);
  if (connection === undefined) {
    connection = new McpServerConnection(target, definitionsOf(key, target));
    connections.set(key, connection);
  }
  return connection;
}

/** The value of a successful call: structured content, else the text, else the content blocks. */
function valueOf(result: ToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content ?? [];
  if (content.every((block) => block.type === 'text' && typeof block.text === 'string'))
    return content.map((block) => block.text).join('\n');
  return content;
}

function textOf(result: ToolResult): string {
  return (result.content ?? [])
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('\n');
}

/**
 * Wraps the tool `tool` of a downstream MCP server as a Capability. Nothing connects until the
 * first call; capabilities whose `server` targets are equal share one client connection, which
 * `closeMcpConnections()` closes. A downstream `isError` result fails the step with the
 * downstream text (MCP_TOOL_FAILED). Each step runs under the tool's definition as listed now,
 * when it matches its pin (`pin`, else the first definition seen): the runtime asks before the
 * authorizer, and the decision records its digest (docs/api.md, "Pinned tools").
 *
 * @example
 * ```ts
 * const readFile = createMcpCapability({
 *   name: 'files.read',
 *   risk: 'read',
 *   server: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] },
 *   tool: 'read_file',
 *   inputSchema: { path: { type: 'string', required: true, description: 'File path' } },
 * });
 * ```
 * @throws TypeError (MCP_CAPABILITY_RISK_INVALID) when `risk` is missing or not exactly
 * `'read'`, `'write'` or `'destructive'`, before anything else is looked at or connected;
 * TypeError (MCP_CAPABILITY_DEFINITION_INVALID) for a malformed `server`, `tool` or `pin`;
 * TypeError (CAPABILITY_DEFINITION_INVALID) for what `createCapability` refuses.
 */
export function createMcpCapability(definition: McpCapabilityDefinition): Capability {
  if (!isObject(definition)) {
    throw invalidDefinition(
      `createMcpCapability() takes a definition object, got ${describeValue(definition)}`,
    );
  }
  const { risk } = definition;
  if (!RISKS.includes(risk)) {
    throw createError(
      TypeError,
      ErrorCode.MCP_CAPABILITY_RISK_INVALID,
      `createMcpCapability() needs an explicit risk 'read', 'write' or 'destructive', got ${describeValue(risk)}`,
    );
  }
  const { name, version = '1.0.0', server, tool, inputSchema, timeoutMs } = definition;
  const key = targetKey(server);
  if (typeof tool !== 'string' || tool === '')
    throw invalidDefinition(`createMcpCapability() tool must be a non-empty string`);
  const pin = pinOf(definition);
  const { serverName } = definition;
  if (serverName !== undefined && typeof serverName !== 'string')
    throw invalidDefinition(`createMcpCapability() serverName must be a string`);
  const definitions = definitionsOf(key, server, serverName);
  const description = definition.description ?? `MCP tool "${tool}" of ${describeTarget(server)}`;
  const capability = createCapability({
    name,
    version,
    description,
    risk,
    ...(inputSchema !== undefined && { inputSchema }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    execute: async ({ input, context }) => {
      if (input !== undefined && !isObject(input)) {
        throw createError(
          TypeError,
          ErrorCode.MCP_TOOL_INPUT_INVALID,
          `MCP tool "${tool}" takes an object input, got ${describeValue(input)}`,
        );
      }
      const connection = connectionFor(key, server);
      const client = await connection.listed();
      // Checked again as the call leaves: a change heard since the decision refuses it too.
      definitions.pinned(tool, pin);
      const result = await connection.callTool(client, tool, input ?? {}, context.signal);
      if (result.isError === true) {
        throw createError(
          Error,
          ErrorCode.MCP_TOOL_FAILED,
          textOf(result) || `MCP tool "${tool}" reported an error`,
        );
      }
      return valueOf(result);
    },
  });
  definitions.watch(capability.name, tool, pin);
  // Asked by the runtime before each step is authorized (docs/api.md, "Pinned tools").
  attachToolDefinition(capability, {
    pinned: async () => {
      await connectionFor(key, server).listed();
      return definitions.pinned(tool, pin);
    },
    seen: () => definitions.seen(tool),
  });
  return capability;
}

/** The definition's `pin`: a digest, `null`, or absent (undefined). */
function pinOf(definition: McpCapabilityDefinition): ToolPin {
  const { pin } = definition;
  if (pin === undefined || pin === null || (typeof pin === 'string' && DIGEST_PATTERN.test(pin)))
    return pin;
  throw invalidDefinition(
    `createMcpCapability() pin must be a digest sha256:<64 lowercase hex>, or null, got ${describeValue(pin)}`,
  );
}

/** Closes every downstream connection (the program calls it when its runtime closes). */
export async function closeMcpConnections(): Promise<void> {
  const open = [...connections.values()];
  connections.clear();
  await Promise.all(open.map((connection) => connection.close()));
}

/** One tool a downstream server lists, with its definition digest. */
export interface ListedMcpTool {
  readonly tool: string;
  readonly definitionDigest: string;
}

/**
 * The tools `server` lists now, in its order, each with its definition digest (what
 * `warrant mcp pin` writes): a connection of its own, closed before this resolves.
 * @throws Error (MCP_SERVER_UNAVAILABLE) when the server cannot be reached or listed.
 */
export async function listMcpTools(server: McpServerTarget): Promise<ListedMcpTool[]> {
  targetKey(server);
  const { Client } = await import('@modelcontextprotocol/client');
  const client = new Client({ name: 'warrant', version: '0.2.0' });
  try {
    await client.connect(await createTransport(server));
    const { tools } = await client.listTools(undefined, { cacheMode: 'refresh' });
    return tools.map((tool) => ({ tool: tool.name, definitionDigest: toolDefinitionDigest(tool) }));
  } catch (error) {
    throw createError(
      Error,
      ErrorCode.MCP_SERVER_UNAVAILABLE,
      `MCP server ${describeTarget(server)} could not be listed: ${describeThrown(error)}`,
      error,
    );
  } finally {
    await client.close().catch(() => {});
  }
}
