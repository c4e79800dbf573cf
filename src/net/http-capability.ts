/**
 * `createHttpCapability` (docs/api.md, "createHttpCapability"): a capability that makes one HTTP
 * request with the guarantees of `http.get`. Its `prepare` normalizes the URL, resolves the host
 * and refuses internal addresses (EFFECT_REFUSED) unless `allowPrivate`; the effect is
 * `{ method, url, addresses, headersDigest, bodyDigest? }`; its `execute` sends exactly that
 * request to exactly those addresses, follows no redirect (a 3xx is the response) and reads at
 * most `maxBytes` of the body.
 */
import type { IncomingMessage } from 'node:http';
import type {
  Capability,
  CapabilityInputSchema,
  CapabilityInputSchemaFor,
  CapabilityRisk,
  InferCapabilityInput,
} from '../capabilities/capability.js';
import { createCapability } from '../capabilities/create-capability.js';
import type * as GuardedHttp from './guarded-http.js';
import type { AddressRule, HostResolver, HttpRequestSpec } from './guarded-http.js';

/**
 * The HTTP stack (node:http, node:https, node:dns) loads with the first request prepared, never
 * at import (docs/decisions.md, "Light import").
 */
let loading: Promise<typeof GuardedHttp> | undefined;
const guarded = () => (loading ??= import('./guarded-http.js'));

/** The response a capability of `createHttpCapability` gets (and returns without `respond`). */
export interface HttpCapabilityResponse {
  /** The URL requested, normalized. */
  readonly url: string;
  readonly status: number;
  /** Header names in lower case; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as UTF-8 text, at most `maxBytes` of it. */
  readonly body: string;
  /** True when the body was longer than `maxBytes` (the rest was not read). */
  readonly truncated: boolean;
}

/** What `createHttpCapability` takes. */
export interface HttpCapabilityDefinition<Input = unknown, Output = HttpCapabilityResponse> {
  name: string;
  version: string;
  description: string;
  risk: CapabilityRisk;
  inputSchema?: CapabilityInputSchemaFor<Input>;
  outputSchema?: Record<string, unknown>;
  /**
   * The request for an input: `{ url, method?, headers?, body? }` (default GET). Pure: it is
   * asked in `prepare` and again in `execute`, and both answers must be the same request.
   */
  request(input: Input): HttpRequestSpec;
  /** The capability's result from the response (default: the response itself). */
  respond?(response: HttpCapabilityResponse, input: Input): Output | Promise<Output>;
  /** Reach loopback, private, link-local, unique-local and metadata addresses too. Default false. */
  allowPrivate?: boolean;
  /** Resolves host names (default `dns.lookup`, every address): for tests and custom DNS. */
  resolve?: HostResolver;
  /** The request's time-out in ms (default 10000); the capability's `timeoutMs` is 1 s more. */
  timeoutMs?: number;
  /** The largest body read, in bytes (default 1 MiB). */
  maxBytes?: number;
  /** Logs start, completion and failure through `context.logger`. Default `true`. */
  lifecycleLogging?: boolean;
}

/**
 * Reads at most `maxBytes` of a body, then destroys the response (which closes its connection).
 * A character cut at the cap is dropped rather than shown as U+FFFD.
 */
async function readCapped(
  response: IncomingMessage,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (chunk.byteLength > room) {
      chunks.push(chunk.subarray(0, room));
      size += room;
      truncated = true;
      // Leaving the loop destroys the response: the rest is dropped with its connection.
      break;
    }
    chunks.push(chunk);
    size += chunk.byteLength;
  }
  return {
    text: new TextDecoder().decode(Buffer.concat(chunks, size), { stream: truncated }),
    truncated,
  };
}

function headersOf(response: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/**
 * A capability that makes one HTTP request, governed by its effect (docs/api.md,
 * "createHttpCapability"). Throws CAPABILITY_DEFINITION_INVALID as `createCapability` does.
 */
export function createHttpCapability<
  const Schema extends CapabilityInputSchema,
  Output = HttpCapabilityResponse,
>(
  definition: Omit<
    HttpCapabilityDefinition<InferCapabilityInput<Schema>, Output>,
    'inputSchema'
  > & {
    readonly inputSchema: Schema;
  },
): Capability<InferCapabilityInput<Schema>, Output>;
export function createHttpCapability<Input = unknown, Output = HttpCapabilityResponse>(
  definition: HttpCapabilityDefinition<Input, Output>,
): Capability<Input, Output>;
export function createHttpCapability<Input, Output>(
  definition: HttpCapabilityDefinition<Input, Output>,
): Capability<Input, Output> {
  const {
    request,
    respond,
    allowPrivate,
    resolve,
    timeoutMs: requestMs = 10_000,
    maxBytes = 1024 * 1024,
    ...rest
  } = definition;
  if (typeof request !== 'function')
    throw new TypeError(`createHttpCapability(): request must be a function`);
  const rule: AddressRule = {
    allowPrivate: allowPrivate === true,
    ...(resolve !== undefined && { resolve }),
  };
  const ask = (input: Input): HttpRequestSpec => request.call(definition, input);
  return createCapability<Input, Output>({
    ...(rest as Omit<typeof rest, 'inputSchema'>),
    ...(rest.inputSchema !== undefined && { inputSchema: rest.inputSchema as never }),
    timeoutMs: requestMs + 1_000,
    prepare: async (input) => (await guarded()).prepareHttp(ask(input), rule),
    execute: async ({ input, context }) => {
      const spec = ask(input);
      const { checkPrepared, normalizeHeaders, prepareHttp, sendPinned } = await guarded();
      // Called by hand, without the runtime's effect: prepared now, with the same guarantees.
      const effect =
        context.effect === undefined
          ? await prepareHttp(spec, rule)
          : checkPrepared(spec, context.effect, rule);
      // A timer of our own, held until the body is read.
      const done = new AbortController();
      const timer = setTimeout(
        () =>
          done.abort(
            new DOMException(`The request timed out after ${requestMs} ms`, 'TimeoutError'),
          ),
        requestMs,
      );
      try {
        const response = await sendPinned(new URL(effect.url), effect.addresses, {
          method: effect.method,
          headers: normalizeHeaders(spec.headers),
          body: spec.body,
          signal: AbortSignal.any([context.signal, done.signal]),
        });
        const { text, truncated } = await readCapped(response, maxBytes);
        const answer: HttpCapabilityResponse = {
          url: effect.url,
          status: response.statusCode ?? 0,
          headers: headersOf(response),
          body: text,
          truncated,
        };
        return respond === undefined
          ? (answer as Output)
          : await respond.call(definition, answer, input);
      } finally {
        clearTimeout(timer);
        done.abort();
      }
    },
  });
}
