/**
 * Continuing a client's trace (README "OpenTelemetry"; docs/api.md, "OpenTelemetry"): the
 * context an incoming request carries (`traceparent` with the W3C propagator) is extracted with
 * the propagator registered through `@opentelemetry/api`, and the runtime is called in it, so
 * the job's `warrant.job` span is a child of the client's span. Without a registered propagator
 * (the API's default is a no-op) the active context is used as before. The API loads with the
 * first request that runs something, not at import (docs/decisions.md, "Light import").
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

/** Runs `work` in the context the request's headers carry (or the active one). */
export async function inRequestTraceContext<T>(
  headers: IncomingHttpHeaders,
  work: () => Promise<T>,
): Promise<T> {
  const otel = api ?? (await loadApi());
  if (otel === undefined) return work();
  const parent = otel.propagation.extract(otel.context.active(), headers);
  return otel.context.with(parent, work);
}
