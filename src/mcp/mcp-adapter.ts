/**
 * The inbound MCP face (docs/api.md, "new McpAdapter"): every capability registered when the adapter is
 * built becomes an MCP tool whose calls are one-step plans through `runtime.executePlan`. Like
 * the HTTP and CLI edges it parses, calls the runtime and formats; it never authorizes,
 * validates input or touches a store (docs/decisions.md, "House rules"). Warrant's admission does the input
 * check, so the advertised JSON Schema is descriptive and the SDK is told not to enforce it.
 */
import {
  McpServer,
  fromJsonSchema,
  type AuthInfo,
  type CallToolResult,
  type JsonSchemaType,
  type JsonSchemaValidator,
  type ServerContext,
  type ToolAnnotations,
  type jsonSchemaValidator,
} from '@modelcontextprotocol/server';
import { createError } from '../errors/warrant-error.js';
import { describeValue } from '../errors/describe-value.js';
import { oneLineError } from '../errors/error-text.js';
import { toJsonSafe } from '../jobs/json-value.js';
// The root re-exports McpAdapter, so importing the root here would be a module cycle: these are
// the very modules the root re-exports from (test/contract/layout.test.ts).
import type { ExecutionCaller } from '../authorization/authorizer.js';
import type { CapabilityDescriptor, CapabilityRisk } from '../capabilities/capability.js';
import type { ExecutionPlan } from '../plan/execution-plan.js';
import { isPlanAdmissionError } from '../plan/plan-admission-error.js';
import type { OperatorRuntime } from '../runtime/operator-runtime.js';

/** What `resolveCaller` learns about one tool call. */
export interface McpCallerRequest {
  /** The tool (capability) name. */
  readonly tool: string;
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
}

const INTERNAL_ERROR = 'Internal error';

// MCP tool annotations are hints; `destructiveHint` only means something when not read-only.
const ANNOTATIONS: Record<CapabilityRisk, ToolAnnotations> = {
  read: { readOnlyHint: true },
  write: { readOnlyHint: false, destructiveHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true },
};

// Admission checks tool arguments (docs/api.md, "runtime.executePlan"), so the SDK must let every value through: its own
// check would answer with a different message and skip the job record.
const acceptEverything: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

function invalidOption(message: string): TypeError {
  return createError(TypeError, 'MCP_ADAPTER_OPTIONS_INVALID', message);
}

/** The field contract (docs/decisions.md) as JSON Schema: types, descriptions, the required list. */
function toJsonSchema(inputSchema: CapabilityDescriptor['inputSchema']): JsonSchemaType {
  const properties: Record<string, JsonSchemaType> = {};
  const required: string[] = [];
  for (const [key, field] of Object.entries(inputSchema)) {
    properties[key] = { type: field.type, description: field.description };
    if (field.required) required.push(key);
  }
  return { type: 'object', properties, ...(required.length > 0 && { required }) };
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A result in the one encoding every edge uses (README "Stores", src/jobs/json-value.ts): the
 * JSON text, and for a result that encodes to an object (not an array) the same value as
 * structuredContent. A cyclic or bigint result reads as it does over HTTP and in the CLI.
 */
function successResult(result: unknown): CallToolResult {
  const encoded = toJsonSafe(result);
  const text = JSON.stringify(encoded) ?? 'null';
  const formatted: CallToolResult = { content: [{ type: 'text', text }] };
  if (isPlainObject(encoded)) formatted.structuredContent = encoded;
  return formatted;
}

/**
 * The SDK keeps its tools in plain objects keyed by tool name, where a capability named after an
 * Object.prototype member met the inherited member (`constructor`: "Tool constructor is already
 * registered", thrown from this constructor) and one named `__proto__` became the table's
 * prototype. Before any tool is registered, its (empty) tool tables are replaced by
 * null-prototype objects, in which every name is an own key like any other (docs/decisions.md,
 * "MCP"; test/mcp/prototype-names.test.ts fails if an SDK update renames the tables).
 */
function useNullPrototypeToolTables(server: McpServer): void {
  const fields = server as unknown as Record<string, unknown>;
  for (const table of ['_registeredTools', '_toolInputSchemaJson']) {
    const current = fields[table];
    if (typeof current === 'object' && current !== null && Object.keys(current).length === 0) {
      fields[table] = Object.create(null) as object;
    }
  }
}

/**
 * Serves the capabilities of an `OperatorRuntime` as MCP tools. The tool list is the inventory
 * at construction; each call runs as a one-step plan pinned to the version seen then, through
 * `executePlan` and therefore through admission and the authorizer. Connect `server` to any
 * transport of `@modelcontextprotocol/server` (stdio, Streamable HTTP, in-memory).
 * Constructing the adapter and listing tools call no authorizer and no capability.
 * @throws TypeError (MCP_ADAPTER_OPTIONS_INVALID) when `runtime` is not a runtime or an option
 * is malformed.
 */
export class McpAdapter {
  /** The SDK server; call `server.connect(transport)` and `server.close()`. */
  readonly server: McpServer;
  readonly #runtime: OperatorRuntime;
  readonly #options: McpAdapterOptions;

  constructor(runtime: OperatorRuntime, options: McpAdapterOptions = {}) {
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
    for (const key of ['resolveCaller', 'onInternalError'] as const) {
      if (options[key] !== undefined && typeof options[key] !== 'function')
        throw invalidOption(
          `options.${key} must be a function, got ${describeValue(options[key])}`,
        );
    }
    if (
      options.caller !== undefined &&
      (typeof options.caller !== 'object' || options.caller === null)
    ) {
      throw invalidOption(`options.caller must be an object, got ${describeValue(options.caller)}`);
    }
    this.#runtime = runtime;
    this.#options = { ...options };
    this.server = new McpServer(
      { name: options.name ?? 'warrant', version: options.version ?? '0.2.0' },
      { capabilities: { tools: {} } },
    );
    useNullPrototypeToolTables(this.server);
    // Introspection only (docs/api.md, "runtime.listCapabilities"): no authorizer, capability or event.
    for (const descriptor of runtime.listCapabilities()) this.#registerTool(descriptor);
  }

  #registerTool({ name, version, description, risk, inputSchema }: CapabilityDescriptor): void {
    this.server.registerTool(
      name,
      {
        description,
        inputSchema: fromJsonSchema(toJsonSchema(inputSchema), acceptEverything),
        annotations: ANNOTATIONS[risk],
      },
      (args: unknown, context: ServerContext) => this.#call(name, version, args, context),
    );
  }

  async #call(
    name: string,
    version: string,
    args: unknown,
    context: ServerContext,
  ): Promise<CallToolResult> {
    const plan: ExecutionPlan = {
      version: '1.0',
      goal: `MCP tool ${name}`,
      steps: [{ id: 'call', capability: name, capabilityVersion: version, input: args }],
    };
    try {
      const caller = await this.#resolveCaller(name, context);
      const job = await this.#runtime.executePlan(plan, { caller });
      // Stopped for approval (the runtime's approvals option): an error the client can act on.
      if (job.status === 'awaiting_approval') {
        const waiting = job.steps.find((step) => step.status === 'awaiting_approval');
        return errorResult(
          oneLineError(`Awaiting approval: job ${job.id}, step ${waiting?.id ?? 'call'}`),
        );
      }
      // A denial or a failure is recorded in the job; its error is the step's message.
      if (job.status !== 'completed')
        return errorResult(oneLineError(job.error ?? 'Execution failed'));
      return successResult(job.result);
    } catch (error) {
      if (isPlanAdmissionError(error)) return errorResult(oneLineError(error.message));
      // docs/decisions.md, "House rules": no inner message, no stack for anything unexpected.
      this.#options.onInternalError?.(error, name);
      return errorResult(INTERNAL_ERROR);
    }
  }

  async #resolveCaller(tool: string, context: ServerContext): Promise<ExecutionCaller | undefined> {
    const { resolveCaller, caller } = this.#options;
    if (resolveCaller === undefined) return caller;
    const authInfo = context.http?.authInfo;
    return resolveCaller({
      tool,
      ...(authInfo !== undefined && { authInfo }),
      ...(context.sessionId !== undefined && { sessionId: context.sessionId }),
    });
  }
}
