/**
 * The inbound MCP face (docs/api.md, "new McpAdapter"): capabilities become MCP tools whose calls
 * are one-step plans through `runtime.executePlan`. Like the HTTP and CLI edges it parses, calls
 * the runtime and formats; it never authorizes, validates input or touches a store
 * (docs/decisions.md, "House rules"). Warrant's admission does the input check, so the
 * advertised JSON Schema is descriptive only.
 *
 * The MCP SDK is loaded on first use (`createServer`, `connect`), never when the package root
 * is imported (docs/decisions.md, "MCP"): this file imports only its types.
 */
import { ErrorCode } from '../errors/error-codes.js';
import type * as ServerSdk from '@modelcontextprotocol/server';
import type {
  AuthInfo,
  CallToolResult,
  Server,
  ServerContext,
  Tool,
  ToolAnnotations,
  Transport,
} from '@modelcontextprotocol/server';
import { createError } from '../errors/warrant-error.js';
import { describeValue } from '../errors/describe-value.js';
import {
  answerText,
  errorText,
  REMOTE_ANSWER,
  storeFailureAnswer,
  valueAnswer,
} from '../json/answer.js';
// The root re-exports McpAdapter, so importing the root here would be a module cycle: these are
// the very modules the root re-exports from (test/contract/layout.test.ts).
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { CapabilityDescriptor, CapabilityRisk } from '../capabilities/capability.js';
import type { ExecutionPlan } from '../plan/execution-plan.js';
import { isPlanAdmissionError } from '../plan/plan-admission-error.js';
import type { OperatorRuntime } from '../runtime/operator-runtime.js';
import { capabilityInputJsonSchema } from '../capabilities/json-schema.js';
import { assignToolNames, type McpToolNameRequest } from './tool-names.js';

export type { McpToolNameRequest } from './tool-names.js';

/** What `resolveCaller` learns about one tool call. */
export interface McpCallerRequest {
  /** The tool name the client called. */
  readonly tool: string;
  /** The capability that tool runs. */
  readonly capability: string;
  /** The validated access token of the request, when the transport carries one (HTTP). */
  readonly authInfo?: AuthInfo;
  /** The transport session, when there is one. */
  readonly sessionId?: string;
}

/** Options of `new McpAdapter(runtime, options?)`. */
export interface McpAdapterOptions {
  /** Server name announced to clients. Default `'warrant'`. */
  name?: string;
  /** Server version announced to clients. Default `'0.2.0'`. */
  version?: string;
  /** The caller of every tool call (ignored when `resolveCaller` is given). */
  caller?: ExecutionCaller;
  /** Resolves the caller per tool call, for example from the transport's `authInfo`. */
  resolveCaller?: (
    request: McpCallerRequest,
  ) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;
  /**
   * Told about errors that are answered only as `Internal error` (a store failure, a throwing
   * `resolveCaller`), so the host can log them. Default: ignored.
   */
  onInternalError?: (error: unknown, tool: string) => void;
  /**
   * The tool name of a capability: 1 to 128 characters of `A-Z a-z 0-9 _ -`. Default: the
   * capability name with every other character (dots included) replaced by `_`.
   */
  toolName?: (capability: McpToolNameRequest) => string;
  /** Which registered capabilities become tools. Default: all of them. */
  include?: (capability: CapabilityDescriptor) => boolean;
}

const INTERNAL_ERROR = 'Internal error';

// MCP tool annotations are hints; `destructiveHint` only means something when not read-only.
const ANNOTATIONS: Record<CapabilityRisk, ToolAnnotations> = {
  read: { readOnlyHint: true },
  write: { readOnlyHint: false, destructiveHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true },
};

type JsonObject = Record<string, unknown>;

let serverSdk: Promise<typeof ServerSdk> | undefined;

/** The MCP server SDK, imported once, on first use. */
function loadServerSdk(): Promise<typeof ServerSdk> {
  serverSdk ??= import('@modelcontextprotocol/server').catch((error: unknown) => {
    serverSdk = undefined;
    throw error;
  });
  return serverSdk;
}

function invalidOption(message: string): TypeError {
  return createError(TypeError, ErrorCode.MCP_ADAPTER_OPTIONS_INVALID, message);
}

/**
 * The JSON Schema a tool publishes for its input: the capability's full JSON Schema (the vendor's
 * own for a Standard Schema that provides one, else the field record's; docs/api.md, "Input
 * schemas"). MCP requires an object at the root; any other root publishes an open object.
 */
function inputJsonSchema(name: string): Tool['inputSchema'] {
  const schema = capabilityInputJsonSchema(name);
  return schema?.type === 'object' ? (schema as Tool['inputSchema']) : { type: 'object' };
}

/** The output schema MCP can publish: one whose root is an object (structuredContent is one). */
function publishableOutputSchema(schema: JsonObject | undefined): Tool['outputSchema'] {
  return schema?.type === 'object' ? (schema as Tool['outputSchema']) : undefined;
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A result in the one encoding every edge uses (README "Stores", src/json/answer.ts): the
 * JSON text, and for a result that encodes to an object (not an array) the same value as
 * structuredContent. A cyclic or bigint result reads as it does over HTTP and in the CLI. A tool
 * that publishes an output schema must answer structuredContent: a result that is not an object
 * is then an error result.
 */
function successResult(result: unknown, outputSchema: boolean): CallToolResult {
  const encoded = valueAnswer(result);
  const text = answerText(encoded);
  if (!isPlainObject(encoded)) {
    return outputSchema
      ? errorResult('The result is not an object, as the output schema of the tool requires')
      : { content: [{ type: 'text', text }] };
  }
  return {
    content: [{ type: 'text', text }],
    structuredContent: encoded as CallToolResult['structuredContent'],
  };
}

/** One served tool: the capability it runs, pinned to the version listed. */
interface ServedTool {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly risk: CapabilityRisk;
  readonly inputSchema: Tool['inputSchema'];
  readonly outputSchema: Tool['outputSchema'];
}

function servedTool(descriptor: CapabilityDescriptor): ServedTool {
  return {
    name: descriptor.name,
    version: descriptor.version,
    description: descriptor.description,
    risk: descriptor.risk,
    inputSchema: inputJsonSchema(descriptor.name),
    outputSchema: publishableOutputSchema(descriptor.outputSchema),
  };
}

/** The `tools/list` entry of a tool: a fresh object on every call. */
function listedTool(name: string, tool: ServedTool): Tool {
  const listed: Tool = {
    name,
    description: tool.description,
    inputSchema: structuredClone(tool.inputSchema),
    annotations: { ...ANNOTATIONS[tool.risk] },
  };
  if (tool.outputSchema !== undefined) listed.outputSchema = structuredClone(tool.outputSchema);
  return listed;
}

function checkOptions(runtime: OperatorRuntime, options: McpAdapterOptions): void {
  if (
    typeof runtime !== 'object' ||
    runtime === null ||
    typeof runtime.listCapabilities !== 'function' ||
    typeof runtime.executePlan !== 'function'
  ) {
    throw invalidOption(`McpAdapter needs an OperatorRuntime, got ${describeValue(runtime)}`);
  }
  if (typeof options !== 'object' || options === null) {
    throw invalidOption(`McpAdapter options must be an object, got ${describeValue(options)}`);
  }
  for (const key of ['name', 'version'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'string')
      throw invalidOption(`options.${key} must be a string, got ${describeValue(options[key])}`);
  }
  for (const key of ['resolveCaller', 'onInternalError', 'toolName', 'include'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function')
      throw invalidOption(`options.${key} must be a function, got ${describeValue(options[key])}`);
  }
  if (
    options.caller !== undefined &&
    (typeof options.caller !== 'object' || options.caller === null)
  ) {
    throw invalidOption(`options.caller must be an object, got ${describeValue(options.caller)}`);
  }
}

/**
 * Serves the capabilities of an `OperatorRuntime` as MCP tools. The tool list is the inventory
 * at construction (filtered by `include`), named by `toolName`; each call runs as a one-step
 * plan pinned to the version seen then, through `executePlan` and therefore through admission
 * and the authorizer. `createServer()` builds an SDK `Server` for one connection; `connect()`
 * builds one and connects it. Constructing the adapter and listing tools call no authorizer and
 * no capability.
 * @throws TypeError MCP_ADAPTER_OPTIONS_INVALID when `runtime` is not a runtime or an option is
 * malformed; MCP_TOOL_NAME_INVALID or MCP_TOOL_NAME_COLLISION for tool names (docs/errors.md).
 */
export class McpAdapter {
  readonly #runtime: OperatorRuntime;
  readonly #options: McpAdapterOptions;
  /** Tool name → capability; a Map, so any name is a key like any other. */
  readonly #tools: ReadonlyMap<string, ServedTool>;
  readonly #connected = new Set<Server>();

  constructor(runtime: OperatorRuntime, options: McpAdapterOptions = {}) {
    checkOptions(runtime, options);
    this.#runtime = runtime;
    this.#options = { ...options };
    const { include, toolName } = this.#options;
    // Introspection only (docs/api.md, "runtime.listCapabilities"): no authorizer, capability or event.
    const served = runtime
      .listCapabilities()
      .filter((descriptor) => include === undefined || include(descriptor) === true)
      .map(servedTool);
    this.#tools = assignToolNames(served, toolName);
  }

  /** The tool names, in listing order, each with the capability it runs. */
  get tools(): { readonly tool: string; readonly capability: string }[] {
    return [...this.#tools].map(([tool, { name }]) => ({ tool, capability: name }));
  }

  /**
   * A new SDK `Server` (`@modelcontextprotocol/server`) answering `tools/list` and `tools/call`
   * for this adapter's tools; one per connection (a factory for `serveStdio` or
   * `createMcpHandler`: `() => adapter.createServer()`). Loads the SDK on first use.
   */
  async createServer(): Promise<Server> {
    const sdk = await loadServerSdk();
    // The low-level Server (not McpServer): the tool table stays this adapter's Map, so no
    // capability name meets an SDK table keyed by plain object (docs/decisions.md, "MCP").
    const server = new sdk.Server(
      { name: this.#options.name ?? 'warrant', version: this.#options.version ?? '0.2.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler('tools/list', () => ({
      tools: [...this.#tools].map(([name, tool]) => listedTool(name, tool)),
    }));
    server.setRequestHandler('tools/call', (request, context) => {
      const { name, arguments: args } = request.params;
      const tool = this.#tools.get(name);
      if (tool === undefined)
        throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
      return this.#call(name, tool, args ?? {}, context);
    });
    return server;
  }

  /** Builds a server (`createServer`) and connects it to `transport`; `close()` closes it. */
  async connect(transport: Transport): Promise<Server> {
    const server = await this.createServer();
    await server.connect(transport);
    this.#connected.add(server);
    return server;
  }

  /** Closes every server `connect()` connected. */
  async close(): Promise<void> {
    const servers = [...this.#connected];
    this.#connected.clear();
    await Promise.all(servers.map((server) => server.close()));
  }

  async #call(
    toolName: string,
    tool: ServedTool,
    args: unknown,
    context: ServerContext,
  ): Promise<CallToolResult> {
    const plan: ExecutionPlan = {
      // A runtime that admits 2.0 gets 2.0 calls: the arguments are then governed values
      // (docs/api.md, "Plan version 2.0"); otherwise 1.0, as before.
      version: this.#runtime.planVersions?.includes('2.0') === true ? '2.0' : '1.0',
      goal: `MCP tool ${toolName}`,
      steps: [{ id: 'call', capability: tool.name, capabilityVersion: tool.version, input: args }],
    };
    try {
      const caller = await this.#resolveCaller(toolName, tool.name, context);
      const job = await this.#runtime.executePlan(plan, { caller });
      // Stopped for approval (the runtime's approvals option): an error the client can act on.
      if (job.status === 'awaiting_approval') {
        const waiting = job.steps.find((step) => step.status === 'awaiting_approval');
        return errorResult(
          errorText(
            `Awaiting approval: job ${job.id}, step ${waiting?.id ?? 'call'}`,
            REMOTE_ANSWER,
          ),
        );
      }
      // A denial or a failure is recorded in the job; its error is the step's message.
      if (job.status !== 'completed')
        return errorResult(errorText(job.error ?? 'Execution failed', REMOTE_ANSWER));
      return successResult(job.result, tool.outputSchema !== undefined);
    } catch (error) {
      if (isPlanAdmissionError(error)) return errorResult(errorText(error.message, REMOTE_ANSWER));
      // A store that failed: Warrant's own words, with the job's id once it exists.
      const failed = storeFailureAnswer(error);
      if (failed !== undefined) {
        if (!failed.unavailable) this.#options.onInternalError?.(error, toolName);
        return errorResult(`${failed.code}: ${failed.error}`);
      }
      // docs/decisions.md, "House rules": no inner message, no stack for anything unexpected.
      this.#options.onInternalError?.(error, toolName);
      return errorResult(INTERNAL_ERROR);
    }
  }

  async #resolveCaller(
    tool: string,
    capability: string,
    context: ServerContext,
  ): Promise<ExecutionCaller | undefined> {
    const { resolveCaller, caller } = this.#options;
    if (resolveCaller === undefined) return caller;
    const authInfo = context.http?.authInfo;
    return resolveCaller({
      tool,
      capability,
      ...(authInfo !== undefined && { authInfo }),
      ...(context.sessionId !== undefined && { sessionId: context.sessionId }),
    });
  }
}
