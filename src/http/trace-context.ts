/**
 * Continuing a client's trace (docs/guide/telemetry.md, "Continuing a client's trace"; docs/api.md,
 * "OpenTelemetry"): the context an incoming request carries (`traceparent` with the W3C propagator)
 * is extracted with the propagator registered through `@opentelemetry/api`, and the runtime is
 * called in it, so the job's `warrant.job` span is a child of the client's span. Without a
 * registered propagator (the API's default is a no-op) the active context is used as before. The
 * API loads with the first request that runs something, not at import (docs/decisions.md, "Light
 * import").
 */
import type * as OtelApi from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';

let api: typeof OtelApi | undefined;
let loading: Promise<typeof OtelApi | undefined> | undefined;

function loadApi(): Promise<typeof OtelApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (loaded) => (api = loaded),
    () => undefined,
  );
  return loading;
}

/** Runs `work` in the context the request's headers carry (or the active one). Once the API
 * has loaded, no promise of its own and no extra tick: `work`'s promise is answered as it is. */
export function inRequestTraceContext<T>(
  headers: IncomingHttpHeaders,
  work: () => Promise<T>,
): Promise<T> {
  if (api === undefined)
    return loadApi().then((otel) => (otel === undefined ? work() : inContext(otel, headers, work)));
  try {
    return inContext(api, headers, work);
  } catch (error) {
    // A propagator that throws rejects, as it did when this function was async.
    return Promise.reject(error as Error);
  }
}

function inContext<T>(
  otel: typeof OtelApi,
  headers: IncomingHttpHeaders,
  work: () => Promise<T>,
): Promise<T> {
  const parent = otel.propagation.extract(otel.context.active(), headers);
  return otel.context.with(parent, work);
}
