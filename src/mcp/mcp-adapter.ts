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
import { createError, isIssuedError } from '../errors/warrant-error.js';
import { describeValue } from '../errors/describe-value.js';
import {
  answerText,
  errorText,
  jobAnswer,
  REMOTE_ANSWER,
  storeFailureAnswer,
  valueAnswer,
} from '../json/answer.js';
// The root re-exports McpAdapter, so importing the root here would be a module cycle: these are
// the very modules the root re-exports from (test/contract/layout.test.ts).
import { frozenCallerCopy } from '../callers/caller-check.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import type { CapabilityDescriptor, CapabilityRisk } from '../capabilities/capability.js';
import type { ExecutionPlan } from '../plan/execution-plan.js';
import { isPlanAdmissionError } from '../plan/plan-admission-error.js';
import type { OperatorRuntime } from '../runtime/operator-runtime.js';
import { capabilityInputJsonSchema } from '../capabilities/json-schema.js';
import { assignToolNames, type McpToolNameRequest } from './tool-names.js';
import type { Job } from '../jobs/job.js';
import {
  JOB_STATUS_TOOL,
  approvalNextStep,
  waitUntilSettled,
  jobStatusContent,
  jobStatusListing,
  pendingContent,
  readJobStatusArgs,
} from './job-status.js';
import { PendingCalls, pendingCallKey } from './pending-calls.js';
import { PLAN_TOOLS, callPlanTool, planToolListings, readPlanToolArgs } from './plan-tools.js';

export type { McpToolNameRequest } from './tool-names.js';

/** What `resolveCaller` learns about one tool call. */
export interface McpCallerRequest {
  /** The tool name the client called. */
  readonly tool: string;
  /** The capability that tool runs (for the job and plan tools, the tool name). */
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
  /**
   * Also serve the tool `warrant_job_status` (`{ jobId, waitMs? }`): a job's status, step
   * statuses and result, to a caller who may read it. Default false.
   */
  jobTools?: boolean;
  /**
   * Also serve the tools `warrant_preview_plan { plan }` and `warrant_submit_plan { plan,
   * idempotencyKey?, approval? }`: whole plans, described by `runtime.planSchema()` for the
   * capabilities `include` keeps. Default false.
   */
  planTools?: boolean;
  /**
   * Submit each call (`runtime.submitPlan`) and wait at most this many milliseconds for its job
   * to leave `queued` or `executing`; a call still queued or executing then answers its job id
   * and status. Default: each call runs inline through `runtime.executePlan` until it ends.
   */
  waitMs?: number;
  /**
   * The flags a `warrant approvals approve` command needs to run the approved step as this
   * process would (its store, modules, roots), as words: the "awaiting approval" answer names
   * the command with them. At most 64 strings of at most 1,000 characters. Default none.
   */
  approveFlags?: readonly string[];
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
 * A result in the one encoding every edge uses (docs/guide/stores.md, "Values JSON cannot hold",
 * src/json/answer.ts): the JSON text, and for a result that encodes to an object (not an array) the
 * same value as structuredContent. A cyclic or bigint result reads as it does over HTTP and in the
 * CLI. A tool that publishes an output schema must answer structuredContent: a result that is not
 * an object is then an error result.
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
  // The one caller checker of every edge (docs/api.md, "Reading and tenants"): a caller the
  // adapter takes is one the runtime admits, refused here rather than at the first call.
  if (options.caller !== undefined) {
    const checked = frozenCallerCopy(options.caller, 'options.caller');
    if (!checked.ok) throw invalidOption(checked.reason);
  }
  for (const key of ['jobTools', 'planTools'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'boolean')
      throw invalidOption(`options.${key} must be a boolean, got ${describeValue(options[key])}`);
  }
  const { approveFlags } = options;
  if (
    approveFlags !== undefined &&
    (!Array.isArray(approveFlags) ||
      approveFlags.length > 64 ||
      !(approveFlags as unknown[]).every(
        (word) => typeof word === 'string' && word.length > 0 && word.length <= 1_000,
      ))
  )
    throw invalidOption(
      `options.approveFlags must be an array of at most 64 non-empty strings of at most 1,000 characters, got ${describeValue(approveFlags)}`,
    );
  if (options.planTools === true && typeof runtime.planSchema !== 'function')
    throw invalidOption('options.planTools needs an OperatorRuntime with planSchema()');
  const { waitMs } = options;
  if (
    waitMs !== undefined &&
    (typeof waitMs !== 'number' || !Number.isSafeInteger(waitMs) || waitMs < 0)
  ) {
    throw invalidOption(
      `options.waitMs must be a non-negative integer, got ${describeValue(waitMs)}`,
    );
  }
}

/** The answer of a call that has no result yet: a text and `{ jobId, stepId?, status, inputDigest? }`. */
function pendingResult(job: Job, options: McpAdapterOptions): CallToolResult {
  const content = pendingContent(job);
  const jobTools = options.jobTools === true;
  const text =
    job.status === 'awaiting_approval'
      ? `Awaiting approval: job ${job.id}, step ${content.stepId ?? 'call'}. ${approvalNextStep(content, jobTools, options.approveFlags)}`
      : `Job ${job.id} is ${job.status}`;
  // isError: the call has no result yet (a client checks a result against the tool's output
  // schema only when it is not an error).
  return {
    content: [{ type: 'text', text: errorText(text, REMOTE_ANSWER) }],
    structuredContent: content,
    isError: true,
  };
}

/** A call without a result yet: stopped for approval, or (with `waitMs`) queued or executing. */
function isPending(job: Job): boolean {
  return (
    job.status === 'awaiting_approval' || job.status === 'queued' || job.status === 'executing'
  );
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
  /** Calls answered "awaiting approval", so that a retry answers the same request. */
  readonly #pending = new PendingCalls();
  /** The plan tools' listings (`planTools`), built with the tool list; fresh copies are listed. */
  readonly #planTools: readonly Tool[] | undefined;

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
    const reserved: [string, string][] = [];
    if (this.#options.jobTools === true) reserved.push([JOB_STATUS_TOOL, 'jobTools']);
    if (this.#options.planTools === true)
      for (const name of PLAN_TOOLS) reserved.push([name, 'planTools']);
    for (const [name, option] of reserved) {
      const taken = this.#tools.get(name);
      if (taken === undefined) continue;
      throw createError(
        TypeError,
        ErrorCode.MCP_TOOL_NAME_COLLISION,
        `Capability ${JSON.stringify(taken.name)} would be the MCP tool "${name}", which ${option} serves; rename it or choose names with options.toolName`,
      );
    }
    // The plans the plan tools take: the capabilities served, at the newest plan version.
    this.#planTools =
      this.#options.planTools === true
        ? planToolListings(
            runtime.planSchema({
              include: (descriptor) => include === undefined || include(descriptor) === true,
            }),
            served.map((tool) => tool.risk),
          )
        : undefined;
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
    const jobTools = this.#options.jobTools === true;
    const planTools = this.#planTools;
    server.setRequestHandler('tools/list', () => {
      const tools = [...this.#tools].map(([name, tool]) => listedTool(name, tool));
      if (jobTools) tools.push(jobStatusListing());
      if (planTools !== undefined) tools.push(...planTools.map((tool) => structuredClone(tool)));
      return { tools };
    });
    server.setRequestHandler('tools/call', (request, context) => {
      const { name, arguments: args } = request.params;
      if (jobTools && name === JOB_STATUS_TOOL) return this.#jobStatus(args ?? {}, context);
      if (planTools !== undefined && PLAN_TOOLS.includes(name))
        return this.#planTool(name, args ?? {}, context);
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
      const key = pendingCallKey(toolName, caller, args);
      if (key === undefined) return this.#answer(await this.#run(plan, caller), tool);
      // The same call while its approval request is pending answers that request again.
      for (
        let prior = this.#pending.get(key);
        prior !== undefined;
        prior = this.#pending.get(key)
      ) {
        const jobId = await prior;
        const job = jobId === undefined ? undefined : await this.#runtime.getJob(jobId);
        if (job?.status === 'awaiting_approval') return pendingResult(job, this.#options);
        this.#pending.forget(key, prior);
      }
      const running = this.#run(plan, caller);
      const call = running.then(
        (job) => (job.status === 'awaiting_approval' ? job.id : undefined),
        () => undefined,
      );
      this.#pending.set(key, call);
      void call.then((jobId) => {
        if (jobId === undefined) this.#pending.forget(key, call);
      });
      return this.#answer(await running, tool);
    } catch (error) {
      if (isPlanAdmissionError(error)) return errorResult(errorText(error.message, REMOTE_ANSWER));
      return this.#failure(error, toolName);
    }
  }

  /** An unexpected error as a call's answer: a store failure in Warrant's words, else `Internal error`. */
  #failure(error: unknown, toolName: string): CallToolResult {
    // A store that failed (or cannot be written now): Warrant's own words, with the job's id
    // once it exists.
    const failed = storeFailureAnswer(
      error,
      this.#runtime.storeAvailability?.().writable === false,
    );
    if (failed !== undefined) {
      if (!failed.unavailable) this.#options.onInternalError?.(error, toolName);
      return errorResult(`${failed.code}: ${failed.error}`);
    }
    // docs/decisions.md, "House rules": no inner message, no stack for anything unexpected.
    this.#options.onInternalError?.(error, toolName);
    // A caller whose actor chain the one checker refuses (docs/api.md, "Callers: acting for
    // someone"): said as such, nothing admitted.
    if (isIssuedError(error, ErrorCode.CALLER_INVALID))
      return errorResult(`${ErrorCode.CALLER_INVALID}: ${(error as Error).message}`);
    return errorResult(INTERNAL_ERROR);
  }

  /** `warrant_preview_plan` and `warrant_submit_plan` (planTools), as the caller of the call. */
  async #planTool(name: string, args: unknown, context: ServerContext): Promise<CallToolResult> {
    const read = readPlanToolArgs(name, args);
    if ('problem' in read) return errorResult(read.problem);
    try {
      const caller = await this.#resolveCaller(name, name, context);
      return await callPlanTool(this.#runtime, read, caller, this.#options.waitMs);
    } catch (error) {
      return this.#failure(error, name);
    }
  }

  /** Runs a call's plan: inline, or submitted and waited for `waitMs` (options.waitMs). */
  async #run(plan: ExecutionPlan, caller: ExecutionCaller | undefined): Promise<Job> {
    const { waitMs } = this.#options;
    if (waitMs === undefined) return this.#runtime.executePlan(plan, { caller });
    const { jobId } = await this.#runtime.submitPlan(plan, { caller });
    const job = await this.#runtime.waitForJob(jobId, { timeoutMs: waitMs });
    if (job === undefined) throw new Error(`The submitted job ${jobId} is not in the store`);
    return job;
  }

  /** A job as the call's answer. */
  #answer(job: Job, tool: ServedTool): CallToolResult {
    // Stopped for approval (the runtime's approvals option), or still queued or executing: an
    // error the client can act on, with the job to follow (warrant_job_status).
    if (isPending(job)) return pendingResult(job, this.#options);
    // A denial or a failure is recorded in the job; its error is the step's message.
    if (job.status !== 'completed')
      return errorResult(errorText(job.error ?? 'Execution failed', REMOTE_ANSWER));
    return successResult(job.result, tool.outputSchema !== undefined);
  }

  /**
   * `warrant_job_status`: the job to a caller who may read it; an unknown job and one the caller
   * may not read answer the same "not found", before any wait (never revealing existence).
   */
  async #jobStatus(args: unknown, context: ServerContext): Promise<CallToolResult> {
    const read = readJobStatusArgs(args);
    if ('problem' in read) return errorResult(read.problem);
    try {
      const caller = await this.#resolveCaller(JOB_STATUS_TOOL, JOB_STATUS_TOOL, context);
      // The runtime's read policy decides (docs/api.md, "Reading and tenants"); no caller reads nothing.
      let job =
        caller === undefined ? undefined : await this.#runtime.getJob(read.jobId, { caller });
      if (job === undefined)
        return errorResult(errorText(`Job ${JSON.stringify(read.jobId)} not found`, REMOTE_ANSWER));
      if (read.waitMs !== undefined && read.waitMs > 0) {
        // Awaiting approval counts as not settled: the wait is for the job's outcome.
        await waitUntilSettled(this.#runtime, job.id, read.waitMs);
        // Read again as the caller: what it may read can change while the job moves on (an
        // approver reads a job only while it may decide its pending request).
        job = await this.#runtime.getJob(read.jobId, { caller: caller as ExecutionCaller });
        if (job === undefined)
          return errorResult(
            errorText(`Job ${JSON.stringify(read.jobId)} not found`, REMOTE_ANSWER),
          );
      }
      const content = jobStatusContent(jobAnswer(job, REMOTE_ANSWER));
      return {
        content: [{ type: 'text', text: answerText(content) }],
        structuredContent: content as CallToolResult['structuredContent'],
      };
    } catch (error) {
      this.#options.onInternalError?.(error, JOB_STATUS_TOOL);
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
