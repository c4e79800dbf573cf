/**
 * MCP over Streamable HTTP at `/mcp` (docs/guide/mcp.md, "A remote server"), with the MCP
 * SDK's own serving entry, `createMcpHandler`: stateless, one `McpAdapter` (the program's tools,
 * src/mcp/program-tools.ts) and a fresh SDK server per request, both protocol eras (2026-07-28 per-request messages and the 2025 `initialize`
 * handshake, served statelessly). The route sits behind the server's request gate like every
 * other: Host, then authentication on the matched route, before the body is read; the body goes
 * through the server's JSON parser (body limit, nesting depth, forbidden keys) and reaches the
 * SDK already parsed. The caller the gate authenticated travels to the adapter as the SDK's
 * `authInfo`, so each tool call runs as that caller (docs/decisions.md "Authentication modes").
 */
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { McpAdapter, type ExecutionCaller, type OperatorRuntime } from '../index.js';
import { programTools } from '../mcp/program-tools.js';
import { bearerToken } from './auth/index.js';
import { inRequestTraceContext } from './trace-context.js';

export const MCP_PATH = '/mcp';

export interface McpRouteOptions {
  /** The caller of a request, as for every governed route. */
  readonly callerOf: (
    request: FastifyRequest,
  ) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;
  /** Told about a tool call answered only as `Internal error` (a failing store). */
  readonly onInternalError: (error: unknown, where: string) => void;
  /** Serve the built-in capabilities as tools too (`warrant serve --builtins`). Default false. */
  readonly builtins?: boolean;
  /**
   * Calls are queued for workers (`warrant serve --queue`): each waits up to this long for its
   * job, then answers it queued or executing with its id (the adapter's `waitMs`).
   */
  readonly queuedWaitMs?: number;
  /**
   * Serve the tool `warrant_job_status` too: the server does when it has an authentication mode (or
   * `resolveCaller`), whose callers the read policy tells apart (docs/api.md, "new McpAdapter").
   */
  readonly jobTools?: boolean;
  /**
   * Serve the plan tools `warrant_preview_plan` and `warrant_submit_plan` too: likewise only when
   * callers are told apart, each plan then submitted as its own caller (docs/api.md, "new McpAdapter").
   */
  readonly planTools?: boolean;
}

/**
 * The SDK's `authInfo` for a caller: `clientId` is the caller's id, `scopes` its scopes, and
 * `extra.caller` the caller itself (deeply frozen), which is what the adapter runs as.
 */
export function authInfoOf(caller: ExecutionCaller | undefined, request: FastifyRequest): AuthInfo {
  const credentials = bearerToken(request.headers);
  return {
    token: credentials.kind === 'token' ? credentials.token : '',
    clientId: caller?.id ?? '',
    scopes: [...(caller?.scopes ?? [])],
    extra: { caller },
  };
}

/** The caller `authInfoOf` carried; never one from the client (the SDK never derives
 * `authInfo` from request headers, it only passes the server's own through). */
function callerOfAuthInfo(authInfo: AuthInfo | undefined): ExecutionCaller | undefined {
  return authInfo?.extra?.caller as ExecutionCaller | undefined;
}

/** A web `Request` for the SDK: method, headers and target of the Fastify request, no body
 * (the parsed body is handed over separately). */
function toWebRequest(request: FastifyRequest, signal: AbortSignal): Request {
  let url: URL;
  try {
    url = new URL(request.url, `http://${request.headers.host ?? 'localhost'}`);
  } catch {
    url = new URL(MCP_PATH, 'http://localhost');
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      try {
        headers.append(name, item);
      } catch {
        // A value Node accepted and the Fetch API does not: the SDK reads none of those.
      }
    }
  }
  return new Request(url, { method: request.method, headers, signal });
}

// Connection-level headers are Node's to decide (a client that asked to close gets a close).
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** Sends the SDK's web `Response`: a JSON answer whole, an event stream as it comes. */
async function sendWebResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) void reply.header(name, value);
  });
  if (response.body === null) return reply.send();
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return reply.send(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
  return reply.send(Buffer.from(await response.arrayBuffer()));
}

export function registerMcpRoute(
  app: FastifyInstance,
  runtime: OperatorRuntime,
  options: McpRouteOptions,
): void {
  // Built here, so two capabilities with one tool name stop the server before it listens.
  const adapter = new McpAdapter(runtime, {
    include: programTools(options.builtins === true),
    jobTools: options.jobTools === true,
    planTools: options.planTools === true,
    resolveCaller: ({ authInfo }) => callerOfAuthInfo(authInfo),
    ...(options.queuedWaitMs !== undefined && { waitMs: options.queuedWaitMs }),
    onInternalError: (error, tool) => options.onInternalError(error, `MCP tool ${tool}`),
  });
  // The server SDK (with zod) loads with the first request to /mcp, not with `warrant serve`
  // (docs/decisions.md, "Light import").
  let handler: Promise<ReturnType<typeof createMcpHandler>> | undefined;
  const mcpHandler = () =>
    (handler ??= import('@modelcontextprotocol/server').then((sdk) =>
      sdk.createMcpHandler(() => adapter.createServer()),
    ));
  // Before the server waits for its connections: an open event stream would hold it.
  // A handler whose SDK failed to load has nothing to close.
  app.addHook('preClose', async () => {
    const ready = await handler?.catch(() => undefined);
    await ready?.close();
  });
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    handler: async (request, reply) => {
      const caller = await options.callerOf(request);
      const aborted = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) aborted.abort();
      });
      const mcp = await mcpHandler();
      // Tool calls run in the context the request carries (a client's traceparent).
      const response = await inRequestTraceContext(request.headers, () =>
        mcp.fetch(toWebRequest(request, aborted.signal), {
          authInfo: authInfoOf(caller, request),
          ...(request.body !== undefined && { parsedBody: request.body }),
        }),
      );
      return sendWebResponse(reply, response);
    },
  });
}
