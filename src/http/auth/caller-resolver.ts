/**
 * `--caller-resolver <module>`: the module's default export decides who the caller of a request
 * is. `undefined`, a throw, no answer within 5 s, or a caller that is not JSON data with a
 * string `id` (or with an `actor` chain the caller checker refuses) answer 401
 * (`WWW-Authenticate: Bearer`); all but `undefined` also give one line for stderr
 * (docs/decisions.md "Authentication modes"). It may answer an `actor`.
 */
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ExecutionCaller } from '../../index.js';
import {
  NO_CREDENTIALS,
  authOptionsError,
  oneLine,
  type AuthRequest,
  type AuthResult,
  type Authenticator,
} from './authenticator.js';
import { frozenCallerCopy } from '../../callers/caller-check.js';
import { checkOptionFile } from './read-option-file.js';

export type CallerResolver = (
  request: AuthRequest,
) => ExecutionCaller | undefined | Promise<ExecutionCaller | undefined>;

/** How long a resolver may take for one request. */
export const CALLER_RESOLVER_TIMEOUT_MS = 5000;
/** Largest resolver module file accepted. */
export const CALLER_RESOLVER_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Imports the module file and returns its default export. The one place that loads it, so the
 * program can swap in its own module loader.
 */
export async function importResolverModule(file: string): Promise<unknown> {
  const label = `--caller-resolver ${file}`;
  await checkOptionFile(file, label, CALLER_RESOLVER_MAX_BYTES);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(resolvePath(file)).href)) as { default?: unknown };
  } catch (error) {
    throw authOptionsError(
      `${label}: could not be loaded (${oneLine(String((error as Error | null)?.message ?? error))})`,
      error,
    );
  }
  return loaded.default;
}

/** The resolver of a `--caller-resolver` file: its default export must be a function. */
export async function loadCallerResolver(
  file: string,
  importModule: (file: string) => Promise<unknown> = importResolverModule,
): Promise<CallerResolver> {
  const exported = await importModule(file);
  if (typeof exported !== 'function')
    throw authOptionsError(
      `--caller-resolver ${file}: the default export must be a function (request) => caller | undefined`,
    );
  return exported as CallerResolver;
}

function frozenRequest(request: AuthRequest): AuthRequest {
  return Object.freeze({
    method: request.method,
    url: request.url,
    headers: Object.freeze({ ...request.headers }),
    ip: request.ip,
  });
}

type Outcome =
  { kind: 'value'; value: unknown } | { kind: 'threw'; error: unknown } | { kind: 'timeout' };

/** Runs the resolver once, bounded by `timeoutMs`; never rejects, never leaves a timer behind. */
function runBounded(resolver: CallerResolver, request: AuthRequest, timeoutMs: number) {
  let answer: Promise<unknown>;
  try {
    answer = Promise.resolve(resolver(request));
  } catch (error) {
    return Promise.resolve<Outcome>({ kind: 'threw', error });
  }
  return new Promise<Outcome>((settle) => {
    const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
    answer.then(
      (value) => {
        clearTimeout(timer);
        settle({ kind: 'value', value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        settle({ kind: 'threw', error });
      },
    );
  });
}

function describeError(error: unknown): string {
  try {
    return oneLine(error instanceof Error ? error.message : String(error));
  } catch {
    return 'unprintable error';
  }
}

export function createResolverAuthenticator(
  resolver: CallerResolver,
  options: { readonly timeoutMs?: number } = {},
): Authenticator {
  const timeoutMs = options.timeoutMs ?? CALLER_RESOLVER_TIMEOUT_MS;
  return {
    async authenticate(request): Promise<AuthResult> {
      const outcome = await runBounded(resolver, frozenRequest(request), timeoutMs);
      if (outcome.kind === 'timeout')
        return { ...NO_CREDENTIALS, log: `caller resolver gave no answer within ${timeoutMs} ms` };
      if (outcome.kind === 'threw')
        return { ...NO_CREDENTIALS, log: `caller resolver threw: ${describeError(outcome.error)}` };
      if (outcome.value === undefined) return NO_CREDENTIALS;
      const checked = frozenCallerCopy(outcome.value);
      if (!checked.ok)
        return {
          ...NO_CREDENTIALS,
          log: `caller resolver returned a malformed caller: ${checked.reason}`,
        };
      // A resolver answering an actor decided who acts (it sees every header, the
      // Warrant-On-Behalf-Of one included): the request may carry that header.
      return checked.caller.actor === undefined
        ? { ok: true, caller: checked.caller }
        : { ok: true, caller: checked.caller, delegated: true };
    },
  };
}
